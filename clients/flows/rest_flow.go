// Create -> read -> pay -> tickets -> cancel with the client oapi-codegen generates (package bookingapi).
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"bus-booking-client-flow/bookingapi"

	openapi_types "github.com/oapi-codegen/runtime/types"
)

func report(operation string, status int, detail string) {
	fmt.Printf("go rest: %s %d %s\n", operation, status, detail)
}

func require(condition bool, format string, arguments ...any) {
	if !condition {
		fmt.Fprintf(os.Stderr, "go rest: FAILED: "+format+"\n", arguments...)
		os.Exit(1)
	}
}

func must[T any](value T, err error) T {
	require(err == nil, "request failed: %v", err)
	return value
}

// Every 2xx answer of a booking operation is one BookingResult; its status says which schema it holds.
func asBooking(result *bookingapi.BookingResult) bookingapi.Booking {
	require(result != nil, "no booking in the answer")
	value := must(result.ValueByDiscriminator())
	booking, ok := value.(bookingapi.Booking)
	require(ok, "expected a booking, got %T", value)
	return booking
}

func asProcessing(result *bookingapi.BookingResult) bookingapi.BookingProcessing {
	require(result != nil, "no BookingProcessing in the answer")
	value := must(result.ValueByDiscriminator())
	processing, ok := value.(bookingapi.BookingProcessing)
	require(ok, "expected a BookingProcessing, got %T", value)
	return processing
}

func main() {
	ctx := context.Background()
	baseURL := os.Getenv("BASE_URL")
	expectedCreateStatus, err := strconv.Atoi(os.Getenv("EXPECT_CREATE_STATUS"))
	require(err == nil, "EXPECT_CREATE_STATUS: %v", err)

	anonymous := must(bookingapi.NewClientWithResponses(baseURL))
	password := os.Getenv("LOGIN_PASSWORD")
	signedIn := must(anonymous.LoginWithResponse(ctx, nil, bookingapi.LoginRequest{
		Email: openapi_types.Email(os.Getenv("LOGIN_EMAIL")), Password: &password,
	}))
	require(signedIn.JSON200 != nil, "login answered %d", signedIn.StatusCode())
	report("login", signedIn.StatusCode(), "token issued")
	bearer := bookingapi.WithRequestEditorFn(func(_ context.Context, request *http.Request) error {
		request.Header.Set("Authorization", "Bearer "+signedIn.JSON200.AccessToken)
		return nil
	})
	client := must(bookingapi.NewClientWithResponses(baseURL, bearer))

	pageSize := 20
	routes := must(client.ListRoutesWithResponse(ctx, &bookingapi.ListRoutesParams{PageSize: &pageSize}))
	require(routes.JSON200 != nil, "listRoutes answered %d", routes.StatusCode())
	report("listRoutes", routes.StatusCode(), fmt.Sprintf("%d routes", len(routes.JSON200.Routes)))

	var tripID openapi_types.UUID
	var seat *bookingapi.SeatMapEntry
	// Seeded trips run every day; a seat still free in the coming days is enough for one booking.
	for offsetDays := 1; offsetDays <= 3 && seat == nil; offsetDays++ {
		day := openapi_types.Date{Time: time.Now().AddDate(0, 0, offsetDays)}
		for _, route := range routes.JSON200.Routes {
			availability := must(client.GetRouteAvailabilityWithResponse(ctx, route.Id, &bookingapi.GetRouteAvailabilityParams{Date: day}))
			require(availability.JSON200 != nil, "getRouteAvailability answered %d", availability.StatusCode())
			for _, trip := range availability.JSON200.Trips {
				for index := range trip.SeatMap {
					if seat == nil && trip.SeatMap[index].Status == "FREE" {
						tripID, seat = trip.TripId, &trip.SeatMap[index]
						report("getRouteAvailability", availability.StatusCode(), fmt.Sprintf("trip %s seat %s", tripID, seat.SeatNumber))
					}
				}
			}
			if seat != nil {
				break
			}
		}
	}
	require(seat != nil, "no free seat in the next three days")

	createKey := fmt.Sprintf("go-flow-%d", time.Now().UnixNano())
	created := must(client.CreateBookingWithResponse(ctx, &bookingapi.CreateBookingParams{IdempotencyKey: &createKey},
		bookingapi.CreateBookingRequest{
			TripId:       tripID,
			ContactEmail: "alice@example.com",
			Passengers: []bookingapi.PassengerInput{{
				FirstName: "Alice", LastName: "Martins", Email: "alice@example.com",
				SeatNumber: &seat.SeatNumber, FareClass: seat.FareClass,
			}},
		}))
	require(created.StatusCode() == expectedCreateStatus, "createBooking answered %d: %s", created.StatusCode(), created.Body)
	var bookingID openapi_types.UUID
	switch created.StatusCode() {
	case http.StatusAccepted:
		require(created.JSON201 == nil, "a 202 must fill JSON202 only")
		processing := asProcessing(created.JSON202)
		bookingID = processing.Id
		report("createBooking", created.StatusCode(), fmt.Sprintf("%s %s Location %s", processing.Status, bookingID, created.Headers202.Location))
	default:
		require(created.JSON202 == nil, "a 201 must fill JSON201 only")
		booking := asBooking(created.JSON201)
		bookingID = booking.Id
		report("createBooking", created.StatusCode(), fmt.Sprintf("%s %s", booking.Status, bookingID))
	}

	processingReads := 0
	read := must(client.GetBookingWithResponse(ctx, bookingID, nil))
	for read.JSON202 != nil {
		processing := asProcessing(read.JSON202)
		processingReads++
		report("getBooking", read.StatusCode(), fmt.Sprintf("%s, retry after %d s", processing.Status, processing.RetryAfterSeconds))
		time.Sleep(time.Duration(processing.RetryAfterSeconds) * time.Second)
		read = must(client.GetBookingWithResponse(ctx, bookingID, nil))
	}
	booking := asBooking(read.JSON200)
	require(booking.Status == "PENDING_PAYMENT", "getBooking answered %d: %s", read.StatusCode(), read.Body)
	report("getBooking", read.StatusCode(), string(booking.Status))

	payKey := fmt.Sprintf("go-flow-pay-%s", bookingID)
	// One of payment_token and payment_method, so oapi-codegen makes each optional: a pointer.
	paymentToken := "tok_visa"
	paid := must(client.ConfirmPaymentWithResponse(ctx, bookingID, &bookingapi.ConfirmPaymentParams{IdempotencyKey: &payKey},
		bookingapi.ConfirmPaymentRequest{PaymentToken: &paymentToken}))
	require(paid.JSON200 != nil, "confirmPayment answered %d: %s", paid.StatusCode(), paid.Body)
	paidBooking := asBooking(paid.JSON200)
	require(paidBooking.Status == "CONFIRMED", "confirmPayment answered %d: %s", paid.StatusCode(), paid.Body)
	report("confirmPayment", paid.StatusCode(), string(paidBooking.Status))

	listed := must(client.ListBookingTicketsWithResponse(ctx, bookingID, nil))
	require(listed.JSON200 != nil, "listBookingTickets answered %d: %s", listed.StatusCode(), listed.Body)
	tickets := must(listed.JSON200.AsTicketList())
	require(len(tickets.Tickets) == 1, "%d tickets for one passenger", len(tickets.Tickets))
	report("listBookingTickets", listed.StatusCode(), fmt.Sprintf("%d ticket %s", len(tickets.Tickets), tickets.Tickets[0].Status))

	reason := "Client flow"
	cancelled := must(client.CancelBookingWithResponse(ctx, bookingID, nil, bookingapi.CancelBookingRequest{Reason: &reason}))
	require(cancelled.JSON200 != nil, "cancelBooking answered %d: %s", cancelled.StatusCode(), cancelled.Body)
	cancelledBooking := asBooking(cancelled.JSON200)
	require(cancelledBooking.Status == "CANCELLED", "cancelBooking answered %d: %s", cancelled.StatusCode(), cancelled.Body)
	report("cancelBooking", cancelled.StatusCode(), string(cancelledBooking.Status))
	fmt.Printf("go rest: outcome create %d, %d PROCESSING read(s), then %s, %s, %s\n",
		created.StatusCode(), processingReads, booking.Status, paidBooking.Status, cancelledBooking.Status)
}
