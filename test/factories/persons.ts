import type { TenantScope } from '../../src/db/tenant-scope.js';
import type { Clock } from '../../src/lib/clock.js';
import { writePersonLog } from '../../src/modules/person-logs/person-logs.service.js';

let seq = 0;

/** Creates a person the way integrations do (a log entry, through the service); returns its id. */
export async function makePerson(
  scope: TenantScope,
  clock: Clock,
  fields: { email?: string; name?: string; phoneNumber?: string; socialProfileUrl?: string } = {},
): Promise<string> {
  const { body } = await writePersonLog(scope, clock, {
    source: 'factory',
    type: 'webhook',
    payload: {},
    email: `p${++seq}@factory.example`,
    ...fields,
  });
  return body.personId;
}
