# Create -> read -> pay -> tickets -> cancel with the client openapi-python-client generates, printing each answer.
import datetime
import os
import sys
import time
import uuid

from bus_booking_client import AuthenticatedClient, Client
from bus_booking_client.api.authentication import login
from bus_booking_client.api.bookings import cancel_booking, create_booking, get_booking
from bus_booking_client.api.payments import confirm_payment
from bus_booking_client.api.routes import get_route_availability, list_routes
from bus_booking_client.api.tickets import list_booking_tickets
from bus_booking_client.models import (
    Booking,
    BookingProcessing,
    CancelBookingRequest,
    ConfirmPaymentRequest,
    CreateBookingRequest,
    LoginRequest,
    PassengerInput,
    TicketList,
)

base_url = os.environ["BASE_URL"]
expected_create_status = int(os.environ["EXPECT_CREATE_STATUS"])


def report(operation, response, detail):
    print(f"python rest: {operation} {response.status_code} {detail}", flush=True)


def require(condition, message):
    if not condition:
        sys.exit(f"python rest: FAILED: {message}")


signed_in = login.sync_detailed(
    client=Client(base_url=base_url),
    body=LoginRequest(email=os.environ["LOGIN_EMAIL"], password=os.environ["LOGIN_PASSWORD"]),
)
require(signed_in.status_code == 200, f"login answered {signed_in.status_code}")
report("login", signed_in, "token issued")
client = AuthenticatedClient(base_url=base_url, token=signed_in.parsed.access_token)

routes = list_routes.sync_detailed(client=client, page_size=20)
require(routes.status_code == 200, f"listRoutes answered {routes.status_code}")
report("listRoutes", routes, f"{len(routes.parsed.routes)} routes")


def free_seat():
    # Seeded trips run every day; a seat still free in the coming days is enough for one booking.
    for offset_days in (1, 2, 3):
        day = datetime.date.today() + datetime.timedelta(days=offset_days)
        for route in routes.parsed.routes:
            availability = get_route_availability.sync_detailed(route.id, client=client, date=day)
            require(availability.status_code == 200, f"getRouteAvailability answered {availability.status_code}")
            for trip in availability.parsed.trips:
                for seat in trip.seat_map:
                    if seat.status == "FREE":
                        report("getRouteAvailability", availability, f"trip {trip.trip_id} seat {seat.seat_number}")
                        return trip.trip_id, seat
    sys.exit("python rest: FAILED: no free seat in the next three days")


trip_id, seat = free_seat()
created = create_booking.sync_detailed(
    client=client,
    idempotency_key=str(uuid.uuid4()),
    body=CreateBookingRequest(
        trip_id=trip_id,
        contact_email="alice@example.com",
        passengers=[
            PassengerInput(
                first_name="Alice",
                last_name="Martins",
                email="alice@example.com",
                seat_number=seat.seat_number,
                fare_class=seat.fare_class,
            )
        ],
    ),
)
require(created.status_code == expected_create_status, f"createBooking answered {created.status_code}")
if created.status_code == 202:
    require(isinstance(created.parsed, BookingProcessing), "a 202 must parse as BookingProcessing")
    report("createBooking", created, f"{created.parsed.status} {created.parsed.id} Location {created.headers['location']}")
    booking_id = created.parsed.id
else:
    require(isinstance(created.parsed, Booking), "a 201 must parse as Booking")
    report("createBooking", created, f"{created.parsed.status} {created.parsed.id}")
    booking_id = created.parsed.id

processing_reads = 0
read = get_booking.sync_detailed(booking_id, client=client)
while read.status_code == 202:
    require(isinstance(read.parsed, BookingProcessing), "a 202 must parse as BookingProcessing")
    processing_reads += 1
    report("getBooking", read, f"{read.parsed.status}, retry after {read.parsed.retry_after_seconds} s")
    time.sleep(read.parsed.retry_after_seconds)
    read = get_booking.sync_detailed(booking_id, client=client)
require(read.status_code == 200 and isinstance(read.parsed, Booking), f"getBooking answered {read.status_code}")
require(str(read.parsed.status) == "PENDING_PAYMENT", f"booking is {read.parsed.status}")
report("getBooking", read, read.parsed.status)

paid = confirm_payment.sync_detailed(
    booking_id, client=client, idempotency_key=str(uuid.uuid4()), body=ConfirmPaymentRequest(payment_token="tok_visa")
)
require(paid.status_code == 200 and isinstance(paid.parsed, Booking), f"confirmPayment answered {paid.status_code}")
require(str(paid.parsed.status) == "CONFIRMED", f"paid booking is {paid.parsed.status}")
report("confirmPayment", paid, paid.parsed.status)

listed = list_booking_tickets.sync_detailed(booking_id, client=client)
require(
    listed.status_code == 200 and isinstance(listed.parsed, TicketList),
    f"listBookingTickets answered {listed.status_code}",
)
require(len(listed.parsed.tickets) == 1, f"{len(listed.parsed.tickets)} tickets for one passenger")
report("listBookingTickets", listed, f"{len(listed.parsed.tickets)} ticket {listed.parsed.tickets[0].status}")

cancelled = cancel_booking.sync_detailed(booking_id, client=client, body=CancelBookingRequest(reason="Client flow"))
require(
    cancelled.status_code == 200 and isinstance(cancelled.parsed, Booking), f"cancelBooking answered {cancelled.status_code}"
)
require(str(cancelled.parsed.status) == "CANCELLED", f"cancelled booking is {cancelled.parsed.status}")
report("cancelBooking", cancelled, cancelled.parsed.status)
print(
    f"python rest: outcome create {created.status_code}, {processing_reads} PROCESSING read(s), then"
    f" {read.parsed.status}, {paid.parsed.status}, {cancelled.parsed.status}",
    flush=True,
)
