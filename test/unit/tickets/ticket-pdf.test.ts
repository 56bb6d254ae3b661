// The ticket PDF: one page, the same bytes for the same ticket; scripts/tickets-check.ts decodes its QR code.
import { renderTicketPdf, type TicketDocument } from '../../../src/tickets/ticket-pdf';

const ticket: TicketDocument = {
  ticketId: '0b6f3c1e-7d2a-5f4b-9c8d-1a2b3c4d5e6f',
  bookingId: 'b6e2f0a4-1c3d-4e5f-8a9b-0c1d2e3f4a5b',
  passengerName: 'Ana Silva',
  routeCode: 'LIS-POR',
  tripId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  boardingStop: {
    code: 'LIS',
    name: 'Lisboa Oriente',
    city: 'Lisboa',
    timeZone: 'Europe/Lisbon',
    localTime: '2026-12-01T09:30:00+00:00',
  },
  alightingStop: {
    code: 'POR',
    name: 'Porto Campanhã',
    city: 'Porto',
    timeZone: 'Europe/Lisbon',
    localTime: '2026-12-01T13:05:00+00:00',
  },
  seatNumber: '3C',
  fareClass: 'STANDARD',
  token: `eyJhbGciOiJFUzI1NiJ9.${'x'.repeat(400)}.${'y'.repeat(86)}`,
};

describe('renderTicketPdf', () => {
  it('renders a one-page PDF, the same bytes every time', async () => {
    const first = await renderTicketPdf(ticket);
    const second = await renderTicketPdf(ticket);
    expect(first.subarray(0, 5).toString()).toBe('%PDF-');
    expect(first.equals(second)).toBe(true);
    const text = first.toString('latin1');
    expect(text.match(/\/Type \/Page\b/g)).toHaveLength(1);
  });
});
