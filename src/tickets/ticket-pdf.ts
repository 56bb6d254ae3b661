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

/** Modules of quiet zone around the code, as the QR standard asks. */
const quietZoneModules = 4;

/**
 * The QR code drawn as vector squares (each row's dark runs as one rectangle): sharp at any zoom or print size,
 * and no raster image to encode. Medium error correction keeps a printed or screen-shown code readable.
 */
function drawQrCode(document: PDFKit.PDFDocument, token: string, x: number, y: number, size: number): void {
  const { modules } = QRCode.create(token, { errorCorrectionLevel: 'M' });
  const moduleSize = size / (modules.size + 2 * quietZoneModules);
  const origin = (index: number) => (index + quietZoneModules) * moduleSize;
  document.save().rect(x, y, size, size).fill('#ffffff');
  for (let row = 0; row < modules.size; row += 1) {
    let column = 0;
    while (column < modules.size) {
      if (!modules.get(row, column)) {
        column += 1;
        continue;
      }
      const start = column;
      while (column < modules.size && modules.get(row, column)) column += 1;
      document.rect(x + origin(start), y + origin(row), (column - start) * moduleSize, moduleSize);
    }
  }
  document.fill('#000000').restore();
}

export async function renderTicketPdf(ticket: TicketDocument): Promise<Buffer> {
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
  const qrSize = 300;
  const qrTop = document.y;
  drawQrCode(document, ticket.token, document.page.margins.left, qrTop, qrSize);
  document.y = qrTop + qrSize + 12;
  document
    .fillColor('#000000')
    .fontSize(9)
    .text('Show this code when boarding. It is valid only for the passenger, seat and stops above.', {
      align: 'left',
    });
  document.end();
  return finished;
}
