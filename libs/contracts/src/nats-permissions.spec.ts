import chartPermissions from '../../../helm/decision-service/files/nats-permissions.json';
import { NATS_PERMISSIONS } from './nats-permissions';
import { BROADCAST_SUBJECTS, DELIVERY_STREAM, inboxPrefixFor, SERVICE_NAMES, SUBJECTS, ServiceName } from './subjects';

/** NATS subject matching: `*` is one token, `>` one or more trailing tokens. */
function matches(pattern: string, subject: string): boolean {
  const wanted = pattern.split('.');
  const tokens = subject.split('.');
  for (let i = 0; i < wanted.length; i++) {
    if (wanted[i] === '>') return tokens.length > i;
    if (i >= tokens.length || (wanted[i] !== '*' && wanted[i] !== tokens[i])) return false;
  }
  return wanted.length === tokens.length;
}

const may = (service: ServiceName, right: 'publish' | 'subscribe', subject: string) =>
  NATS_PERMISSIONS[service][right].some((pattern) => matches(pattern, subject));
const holders = (right: 'publish' | 'subscribe', subject: string) => SERVICE_NAMES.filter((service) => may(service, right, subject));
const ownerOf = (subject: string) => subject.split('.')[1] as ServiceName;
const requestSubjects = Object.values(SUBJECTS).flatMap((group) => Object.values(group) as string[]);

describe('NATS permissions per service', () => {
  it('the matcher follows NATS wildcards', () => {
    expect(matches('a.*.c', 'a.b.c')).toBe(true);
    expect(matches('a.*', 'a.b.c')).toBe(false);
    expect(matches('a.>', 'a.b.c')).toBe(true);
    expect(matches('a.>', 'a')).toBe(false);
    expect(matches('a.b', 'a.b.c')).toBe(false);
  });

  it.each(requestSubjects)('%s is served by its owner alone and called by someone', (subject) => {
    expect(SERVICE_NAMES).toContain(ownerOf(subject));
    expect(holders('subscribe', subject)).toEqual([ownerOf(subject)]);
    expect(holders('publish', subject).length).toBeGreaterThan(0);
    expect(holders('publish', subject)).not.toContain(ownerOf(subject));
  });

  it("only the runner may ask for workspace secrets' values", () => {
    expect(holders('publish', SUBJECTS.delivery.resolveSecrets)).toEqual(['decision-runner']);
    expect(holders('publish', SUBJECTS.delivery.putSecret)).toEqual(['gateway']);
  });

  /** Who hears each broadcast: the replicas of its owner, but for the ledger's plan changes, which only the gateway caches. */
  const hearers = (subject: string): ServiceName[] => (subject === BROADCAST_SUBJECTS.billingPlanChanged ? ['gateway'] : [ownerOf(subject)]);

  it.each(Object.values(BROADCAST_SUBJECTS))('broadcast %s is published by its owner alone and heard only where it is cached', (subject) => {
    expect(holders('publish', subject)).toEqual([ownerOf(subject)]);
    expect(holders('subscribe', subject)).toEqual(hearers(subject));
  });

  it('deliveries are published by the runner (and resent by the delivery service) and the JetStream API is the delivery service’s alone', () => {
    const delivery = DELIVERY_STREAM.subjectFor('8f9f2c1e-0000-4000-8000-000000000000');
    expect(holders('publish', delivery)).toEqual(['decision-runner', 'delivery']);
    expect(holders('subscribe', delivery)).toEqual([]);
    for (const api of [`$JS.API.STREAM.CREATE.${DELIVERY_STREAM.name}`, `$JS.API.CONSUMER.INFO.${DELIVERY_STREAM.name}.${DELIVERY_STREAM.consumer}`]) {
      expect(holders('publish', api)).toEqual(['delivery']);
    }
    expect(holders('publish', '$JS.API.STREAM.DELETE.OTHER')).toEqual([]);
  });

  it('nobody may publish or subscribe to everything', () => {
    for (const service of SERVICE_NAMES) {
      for (const right of ['publish', 'subscribe'] as const) {
        expect(NATS_PERMISSIONS[service][right]).not.toContain('>');
        expect(may(service, right, 'v1.some-new-service.anything')).toBe(false);
      }
    }
  });

  it('each service reads the answers in its own inboxes, and no other service reads them', () => {
    for (const service of SERVICE_NAMES) {
      const answer = `${inboxPrefixFor(service)}.nuid123.7`;
      expect(holders('subscribe', answer)).toEqual([service]);
    }
    expect(holders('subscribe', '_INBOX.nuid123.7')).toEqual([]);
    expect(inboxPrefixFor('probe server.1')).toBe('_INBOX.probe_server_1');
  });

  it('the Helm chart renders exactly these lists', () => {
    // On a mismatch, write the file again: node -e "console.log(JSON.stringify(require('./dist/libs/contracts/src').NATS_PERMISSIONS, null, 2))"
    expect(chartPermissions).toEqual(NATS_PERMISSIONS);
  });
});
