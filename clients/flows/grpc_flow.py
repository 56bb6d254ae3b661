# Create -> pay -> cancel over gRPC with mutual TLS through the grpcio client generated from `buf export proto`.
import json
import os
import sys
import time
import urllib.request
import uuid

import grpc
from com.example.bookings.v1 import booking_pb2, booking_service_pb2, booking_service_pb2_grpc
from google.rpc import error_details_pb2, status_pb2

base_url = os.environ["BASE_URL"]
certificates = os.environ["GRPC_CERT_DIR"]
expect_processing = os.environ["EXPECT_CREATE_STATUS"] == "202"


def report(operation, outcome, detail):
    print(f"python grpc: {operation} {outcome} {detail}", flush=True)


def require(condition, message):
    if not condition:
        sys.exit(f"python grpc: FAILED: {message}")


def rest_json(path, token=None, body=None):
    # gRPC has no sign-in nor catalogue: the token and a free seat come from REST, as for any gRPC client.
    request = urllib.request.Request(
        base_url + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"content-type": "application/json", **({"authorization": f"Bearer {token}"} if token else {})},
    )
    with urllib.request.urlopen(request, timeout=15) as response:
        return json.load(response)


def error_info(error):
    """The google.rpc.ErrorInfo a failed call carries in `grpc-status-details-bin`, if any."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info
    return None


def read_file(name):
    with open(os.path.join(certificates, name), "rb") as file:
        return file.read()


token = rest_json(
    "/api/auth/login", body={"email": os.environ["LOGIN_EMAIL"], "password": os.environ["LOGIN_PASSWORD"]}
)["access_token"]
routes = rest_json("/api/routes?page_size=20", token)["routes"]
trip_id, seat = None, None
for offset_days in (1, 2, 3):
    day = time.strftime("%Y-%m-%d", time.localtime(time.time() + offset_days * 86400))
    for route in routes:
        for trip in rest_json(f"/api/routes/{route['id']}/availability?date={day}", token)["trips"]:
            free = [entry for entry in trip["seat_map"] if entry["status"] == "FREE"]
            if free and seat is None:
                trip_id, seat = trip["trip_id"], free[0]
require(seat is not None, "no free seat in the next three days")

credentials = grpc.ssl_channel_credentials(
    root_certificates=read_file("ca.crt"), private_key=read_file("client.key"), certificate_chain=read_file("client.crt")
)
channel = grpc.secure_channel(os.environ["GRPC_ADDRESS"], credentials)
service = booking_service_pb2_grpc.BookingServiceStub(channel)
metadata = [("authorization", f"Bearer {token}")]
status_name = booking_pb2.BookingStatus.Name

request = booking_service_pb2.CreateBookingRequest(
    request_id=str(uuid.uuid4()),
    trip_id=trip_id,
    contact_email="alice@example.com",
    passengers=[
        booking_service_pb2.PassengerInput(
            first_name="Alice",
            last_name="Martins",
            email="alice@example.com",
            seat_number=seat["seat_number"],
            fare_class=seat["fare_class"],
        )
    ],
)
try:
    booking_id = service.CreateBooking(request, metadata=metadata, timeout=15).booking.id
    require(not expect_processing, "CreateBooking answered the booking while the worker was paused")
    create_outcome = "OK"
    report("CreateBooking", create_outcome, f"{booking_id} seat {seat['seat_number']}")
except grpc.RpcError as error:
    info = error_info(error)
    require(
        expect_processing and error.code() == grpc.StatusCode.UNAVAILABLE and info and info.reason == "BOOKING_PROCESSING",
        f"CreateBooking failed with {error.code()} {info}",
    )
    booking_id = info.metadata["bookingId"]
    create_outcome = error.code().name
    report("CreateBooking", create_outcome, f"{info.reason} bookingId {booking_id}")

processing_reads = 0
while True:
    try:
        booking = service.GetBooking(
            booking_service_pb2.GetBookingRequest(booking_id=booking_id), metadata=metadata, timeout=15
        ).booking
        break
    except grpc.RpcError as error:
        info = error_info(error)
        require(info is not None and info.reason == "BOOKING_PROCESSING", f"GetBooking failed with {error.code()} {info}")
        processing_reads += 1
        report("GetBooking", error.code().name, info.reason)
        time.sleep(1)
require(status_name(booking.status) == "BOOKING_STATUS_PENDING_PAYMENT", f"booking is {status_name(booking.status)}")
report("GetBooking", "OK", status_name(booking.status))

paid = service.ConfirmPayment(
    booking_service_pb2.ConfirmPaymentRequest(booking_id=booking_id, payment_token="tok_visa", request_id=str(uuid.uuid4())),
    metadata=metadata,
    timeout=15,
).booking
require(status_name(paid.status) == "BOOKING_STATUS_CONFIRMED", f"paid booking is {status_name(paid.status)}")
report("ConfirmPayment", "OK", status_name(paid.status))

cancelled = service.CancelBooking(
    booking_service_pb2.CancelBookingRequest(booking_id=booking_id, reason="Client flow"), metadata=metadata, timeout=15
).booking
require(status_name(cancelled.status) == "BOOKING_STATUS_CANCELLED", f"cancelled booking is {status_name(cancelled.status)}")
report("CancelBooking", "OK", status_name(cancelled.status))
channel.close()
print(
    f"python grpc: outcome create {create_outcome}, {processing_reads} BOOKING_PROCESSING read(s), then"
    f" {status_name(booking.status)}, {status_name(paid.status)}, {status_name(cancelled.status)}",
    flush=True,
)
