import { JetStreamClient } from 'nats';
import { NatsLink } from '@ds/platform';

/** The process's one JetStream client (settlements and deliveries), over the process's one NATS connection. */
export const RUNNER_JETSTREAM = Symbol('runner-jetstream');

export function runnerJetStream(nats: NatsLink): JetStreamClient {
  return nats.connection.jetstream();
}
