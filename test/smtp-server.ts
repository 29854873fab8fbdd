import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A message the test server accepted: the envelope, and the message as sent (headers and body). */
export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** The raw message with quoted-printable soft breaks and escapes undone (text to search in). */
  decoded: string;
}

export interface TestSmtpServer {
  /** `smtp://user:password@127.0.0.1:port`, for SMTP_URL. */
  readonly url: string;
  readonly port: number;
  readonly received: ReceivedMail[];
  /** The next message to arrive (resolves at once with one not yet taken). */
  next(): Promise<ReceivedMail>;
  /** From now on, refuse every message (`554`) after its data. */
  refuseMessages(refuse: boolean): void;
  close(): Promise<void>;
}

function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * A real SMTP server for tests (npm `smtp-server`) on a port of 127.0.0.1, requiring a login: the
 * service's nodemailer client speaks to it as to a provider's. No TLS (STARTTLS is not offered),
 * so `smtp://` is plain on loopback.
 */
export async function startTestSmtpServer(
  credentials: { user: string; password: string } = { user: 'pages', password: 's3cret-pw' },
): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const waiting: ((mail: ReceivedMail) => void)[] = [];
  let taken = 0;
  let refuse = false;
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === credentials.user && auth.password === credentials.password) {
        callback(null, { user: auth.username });
      } else callback(new Error('535 Authentication failed'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (refuse) return callback(Object.assign(new Error('Message refused by policy'), { responseCode: 554 }));
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          decoded: decodeQuotedPrintable(raw),
        };
        received.push(mail);
        const waiter = waiting.shift();
        if (waiter) {
          taken++;
          waiter(mail);
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://${credentials.user}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}`,
    port,
    received,
    next() {
      if (taken < received.length) return Promise.resolve(received[taken++]!);
      return new Promise((resolve) => waiting.push(resolve));
    },
    refuseMessages(value) {
      refuse = value;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
