import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { AUTHORITATIVE_ANSWER, decode, encode, RECURSION_AVAILABLE, type Answer } from 'dns-packet';

/**
 * What the server answers for a name's TXT question: the records, each one string or several
 * (an empty list: the name exists but has no TXT record), a failure code, or nothing at all (the
 * resolver times out). A name the server was told nothing about does not exist (NXDOMAIN).
 */
type TestTxtAnswer = (string | string[])[] | 'SERVFAIL' | 'REFUSED' | 'silence';

const RCODES = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

export interface TestNameServer {
  /** `127.0.0.1:port`, for DNS_SERVERS or `dnsResolver({ servers })`. */
  readonly address: string;
  /** The names asked, in order. */
  readonly asked: string[];
  /** Sets (or, with undefined, removes) what `name`'s TXT question is answered with. */
  txt(name: string, answer: TestTxtAnswer | undefined): void;
  close(): Promise<void>;
}

/**
 * A real name server for tests, on a UDP port of 127.0.0.1 (dns-packet over node:dgram): the
 * service's own c-ares resolver asks it exactly as it would ask a public one, so tests exercise the
 * real look-up path (timeouts, NXDOMAIN, NODATA, SERVFAIL) and no test depends on the public DNS.
 * Only TXT questions get records; any other question about a known name is NODATA.
 */
export async function startTestNameServer(): Promise<TestNameServer> {
  const socket = dgram.createSocket('udp4');
  const answers = new Map<string, TestTxtAnswer>();
  const asked: string[] = [];
  socket.on('message', (message, peer) => {
    let query;
    try {
      query = decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (question === undefined) return;
    const name = question.name.toLowerCase();
    asked.push(name);
    const answer = answers.get(name);
    if (answer === 'silence') return;
    let rcode: number = RCODES.NXDOMAIN;
    const records: Answer[] = [];
    if (answer === 'SERVFAIL' || answer === 'REFUSED') rcode = RCODES[answer];
    else if (answer !== undefined) {
      rcode = RCODES.NOERROR;
      if (question.type === 'TXT') {
        for (const data of answer) records.push({ type: 'TXT', name: question.name, ttl: 1, data });
      }
    }
    const response = encode({
      type: 'response',
      id: query.id,
      flags: AUTHORITATIVE_ANSWER | RECURSION_AVAILABLE | rcode,
      questions: [question],
      answers: records,
    });
    socket.send(response, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(socket.address() as AddressInfo).port}`,
    asked,
    txt(name, answer) {
      if (answer === undefined) answers.delete(name.toLowerCase());
      else answers.set(name.toLowerCase(), answer);
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
