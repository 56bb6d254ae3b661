# Create -> read -> pay -> tickets -> cancel with the client openapi-generator's `python` generator makes (openapi_client).
import datetime
import os
import sys
import time
import typing
import uuid

import openapi_client
from openapi_client import (
    AuthenticationApi,
    Booking,
    BookingProcessing,
    BookingsApi,
    CancelBookingRequest,
    ConfirmPaymentRequest,
    CreateBookingRequest,
    LoginRequest,
    PassengerInput,
    PaymentsApi,
    RoutesApi,
    TicketList,
    TicketsApi,
)

label = "openapi-generator python"
base_url = os.environ["BASE_URL"]
expected_create_status = int(os.environ["EXPECT_CREATE_STATUS"])


def report(operation, answer, detail):
    print(f"{label}: {operation} {answer.status_code} {detail}", flush=True)


def require(condition, message):
    if not condition:
        sys.exit(f"{label}: FAILED: {message}")


def holds_annotation(method, value):
    # The generator annotates each method with one type: every answer it returns must be of that type.
    return isinstance(value, typing.get_type_hints(method)["return"])


def header(answer, name):
    return {key.lower(): value for key, value in (answer.headers or {}).items()}.get(name.lower())


def result_of(method, answer):
    require(holds_annotation(method, answer.data), f"{method.__name__} returned a {type(answer.data).__name__}")
    return answer.data.actual_instance


anonymous = openapi_client.ApiClient(openapi_client.Configuration(host=base_url))
signed_in = AuthenticationApi(anonymous).login_with_http_info(
    LoginRequest(email=os.environ["LOGIN_EMAIL"], password=os.environ["LOGIN_PASSWORD"])
)
require(signed_in.status_code == 200, f"login answered {signed_in.status_code}")
report("login", signed_in, "token issued")
client = openapi_client.ApiClient(openapi_client.Configuration(host=base_url, access_token=signed_in.data.access_token))
bookings, payments, routes_api, tickets = (
    BookingsApi(client),
    PaymentsApi(client),
    RoutesApi(client),
    TicketsApi(client),
)

routes = routes_api.list_routes_with_http_info(page_size=20)
require(routes.status_code == 200, f"listRoutes answered {routes.status_code}")
report("listRoutes", routes, f"{len(routes.data.routes)} routes")


def free_seat():
    # Seeded trips run every day; a seat still free in the coming days is enough for one booking.
    for offset_days in (1, 2, 3):
        day = datetime.date.today() + datetime.timedelta(days=offset_days)
        for route in routes.data.routes:
            availability = routes_api.get_route_availability_with_http_info(route.id, day)
            require(availability.status_code == 200, f"getRouteAvailability answered {availability.status_code}")
            for trip in availability.data.trips:
                for seat in trip.seat_map:
                    if seat.status == "FREE":
                        report("getRouteAvailability", availability, f"trip {trip.trip_id} seat {seat.seat_number}")
                        return trip.trip_id, seat
    sys.exit(f"{label}: FAILED: no free seat in the next three days")


trip_id, seat = free_seat()
created = bookings.create_booking_with_http_info(
    CreateBookingRequest(
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
    idempotency_key=str(uuid.uuid4()),
)
require(created.status_code == expected_create_status, f"createBooking answered {created.status_code}")
outcome = result_of(bookings.create_booking, created)
if created.status_code == 202:
    require(
        isinstance(outcome, BookingProcessing), f"a 202 must hold a BookingProcessing, not {type(outcome).__name__}"
    )
    report("createBooking", created, f"{outcome.status} {outcome.id} Location {header(created, 'Location')}")
else:
    require(isinstance(outcome, Booking), f"a 201 must hold a Booking, not {type(outcome).__name__}")
    report("createBooking", created, f"{outcome.status.value} {outcome.id}")
booking_id = outcome.id

processing_reads = 0
read = bookings.get_booking_with_http_info(booking_id)
while read.status_code == 202:
    waiting = result_of(bookings.get_booking, read)
    require(isinstance(waiting, BookingProcessing), "a 202 must hold a BookingProcessing")
    processing_reads += 1
    report("getBooking", read, f"{waiting.status}, retry after {waiting.retry_after_seconds} s")
    time.sleep(waiting.retry_after_seconds)
    read = bookings.get_booking_with_http_info(booking_id)
booking = result_of(bookings.get_booking, read)
require(read.status_code == 200 and isinstance(booking, Booking), f"getBooking answered {read.status_code}")
require(booking.status.value == "PENDING_PAYMENT", f"booking is {booking.status.value}")
report("getBooking", read, booking.status.value)

paid = payments.confirm_payment_with_http_info(
    booking_id, ConfirmPaymentRequest(payment_token="tok_visa"), idempotency_key=str(uuid.uuid4())
)
paid_booking = result_of(payments.confirm_payment, paid)
require(paid.status_code == 200 and isinstance(paid_booking, Booking), f"confirmPayment answered {paid.status_code}")
require(paid_booking.status.value == "CONFIRMED", f"paid booking is {paid_booking.status.value}")
report("confirmPayment", paid, paid_booking.status.value)

listed = tickets.list_booking_tickets_with_http_info(booking_id)
require(holds_annotation(tickets.list_booking_tickets, listed.data), "listBookingTickets broke its annotation")
ticket_list = listed.data.actual_instance
require(
    listed.status_code == 200 and isinstance(ticket_list, TicketList),
    f"listBookingTickets answered {listed.status_code}",
)
require(len(ticket_list.tickets) == 1, f"{len(ticket_list.tickets)} tickets for one passenger")
report("listBookingTickets", listed, f"{len(ticket_list.tickets)} ticket {ticket_list.tickets[0].status}")

cancelled = bookings.cancel_booking_with_http_info(
    booking_id, cancel_booking_request=CancelBookingRequest(reason="Client flow")
)
cancelled_booking = result_of(bookings.cancel_booking, cancelled)
require(
    cancelled.status_code == 200 and isinstance(cancelled_booking, Booking),
    f"cancelBooking answered {cancelled.status_code}",
)
require(cancelled_booking.status.value == "CANCELLED", f"cancelled booking is {cancelled_booking.status.value}")
report("cancelBooking", cancelled, cancelled_booking.status.value)
print(
    f"{label}: outcome create {created.status_code}, {processing_reads} PROCESSING read(s), then"
    f" {booking.status.value}, {paid_booking.status.value}, {cancelled_booking.status.value}",
    flush=True,
)
