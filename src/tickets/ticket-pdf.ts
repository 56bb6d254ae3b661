// A ticket as a one-page PDF: passenger, trip, stops with local times, seat, and the signed ticket as a QR code.
import PDFDocument from 'pdfkit';
import QRCode from 'qrcode';
import type { SegmentStopTime } from '../domain/booking';

export interface TicketDocument {
  readonly ticketId: string;
  readonly bookingId: string;
  readonly passengerName: string;
  readonly routeCode: string;
  readonly tripId: string;
  readonly boardingStop: SegmentStopTime;
  readonly alightingStop: SegmentStopTime;
  readonly seatNumber: string;
  readonly fareClass: string;
  /** The QR payload: the ticket's compact JWS. */
  readonly token: string;
}

/** `2026-12-01T09:30:00+01:00` as `2026-12-01 09:30 (UTC+01:00)`: the wall clock at the stop. */
function wallClock(localTime: string): string {
  const offset = localTime.slice(19);
  return `${localTime.slice(0, 10)} ${localTime.slice(11, 16)} (UTC${offset === 'Z' ? '+00:00' : offset})`;
}

function stopLine(stop: SegmentStopTime): string {
  return `${stop.name}, ${stop.city} (${stop.code})`;
}

/** PNG of the QR code; medium error correction keeps a printed or screen-shown code readable. */
async function qrPng(token: string): Promise<Buffer> {
  return QRCode.toBuffer(token, { type: 'png', errorCorrectionLevel: 'M', margin: 4, scale: 8 });
}

export async function renderTicketPdf(ticket: TicketDocument): Promise<Buffer> {
  const qr = await qrPng(ticket.token);
  // A fixed creation date: the same ticket always renders to the same bytes.
  const document = new PDFDocument({
    size: 'A4',
    margin: 50,
    info: { Title: `Ticket ${ticket.ticketId}`, CreationDate: new Date(0) },
  });
  const chunks: Buffer[] = [];
  document.on('data', (chunk: Buffer) => chunks.push(chunk));
  const finished = new Promise<Buffer>((resolve, reject) => {
    document.on('end', () => resolve(Buffer.concat(chunks)));
    document.on('error', reject);
  });

  document.fontSize(22).text('Bus ticket', { continued: false });
  document.moveDown(0.5);
  document.fontSize(14).text(ticket.passengerName);
  document.moveDown(0.5);
  document.fontSize(11);
  const rows: [string, string][] = [
    ['From', stopLine(ticket.boardingStop)],
    ['Departs', wallClock(ticket.boardingStop.localTime)],
    ['To', stopLine(ticket.alightingStop)],
    ['Arrives', wallClock(ticket.alightingStop.localTime)],
    ['Seat', `${ticket.seatNumber} (${ticket.fareClass})`],
    ['Route', ticket.routeCode],
    ['Trip', ticket.tripId],
    ['Booking', ticket.bookingId],
    ['Ticket', ticket.ticketId],
  ];
  for (const [label, value] of rows) {
    document.font('Helvetica-Bold').text(`${label}: `, { continued: true });
    document.font('Helvetica').text(value);
  }
  document.moveDown(1);
  document.image(qr, { fit: [300, 300] });
  document.moveDown(0.5);
  document
    .fontSize(9)
    .text('Show this code when boarding. It is valid only for the passenger, seat and stops above.');
  document.end();
  return finished;
}
