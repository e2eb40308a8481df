/**
 * The delivery service's subjects and their payloads, and the deliveries the runner publishes to the
 * JetStream DELIVERIES stream.
 */
import type { WorkspaceScoped } from './common';
import { rpcSubject } from './typed-subjects';

export type DeliveryKind = 'webhook' | 'http' | 'workflow' | 'agent';

/**
 * One outgoing call, published once per queued destination with `Nats-Msg-Id` = `deliveryId` on
 * `DELIVERY_STREAM.subjectFor(workspaceId)`. The runner renders everything that depends on the run; the
 * delivery service adds only what depends on the attempt (signature, timestamp, delivery-id headers).
 */
export interface DeliveryMessage {
  /** `dlv_…`: the delivery's id, the JetStream message id, the event id of a webhook. */
  deliveryId: string;
  workspaceId: string;
  decisionId: string;
  decisionSlug: string;
  executionId: string;
  /** The destination's `key` in the schema. */
  destinationKey: string;
  kind: DeliveryKind;
  livemode: boolean;
  url: string;
  method: string;
  /**
   * The destination's own headers (at most 20, none of them reserved for the delivery) and the body's
   * `content-type`: `application/json` for webhooks, workflows and agents; for http as its destination declares,
   * else `application/json` for a JSON body template and `text/plain; charset=utf-8` for another.
   */
  headers: Record<string, string>;
  /** The exact body text to send (a webhook's `decision.completed` event, a rendered template, an agent or workflow payload). */
  body: string;
  /** ISO 8601 time the run answered. */
  createdAt: string;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface ListDeliveriesRequest extends WorkspaceScoped {
  limit: number;
  cursor: string | null;
  /** `dec_…`: only this decision's deliveries. */
  decisionId: string | null;
  status: DeliveryStatus | null;
}

export interface DeliveryRef extends WorkspaceScoped {
  deliveryId: string;
  /**
   * Whether the caller may read what was sent and answered (request headers, request and response bodies, the
   * response's content type): Admins and Owners. Absent or false, the reply carries their sizes only.
   */
  bodies?: boolean;
}

/** One attempt as the application shows it. */
export interface DeliveryAttemptView {
  sequence: number;
  attempt: number;
  started_at: string;
  /** `succeeded`, `failed` (the receiver answered something else), `timeout`, `refused` (SSRF guard or scheme), `network`, `interrupted` (the sender stopped mid-attempt). */
  outcome: string;
  response_status: number | null;
  duration_ms: number | null;
  error: string | null;
}

/** What an attempt's receiver answered, as kept: its content type and at most the first 8 KiB of its body. */
export interface DeliveryResponseView {
  /** Null too when the caller may not read bodies. */
  content_type: string | null;
  /**
   * Secrets and signatures the receiver echoed, in any spelling, are `[redacted]`. Null when the caller may not
   * read bodies (below Admin).
   */
  body: string | null;
  /** Bytes of the body as kept (UTF-8, after the 8 KiB cut and redaction), shown to every role. */
  body_bytes: number;
  /** The body was longer than what is kept, or stopped coming before the attempt's time ran out. */
  truncated: boolean;
}

/** An attempt on one delivery's own view: with what its receiver answered. */
export interface DeliveryAttemptDetailView extends DeliveryAttemptView {
  /** Null when no answer came (timeout, network, refused, interrupted) or the attempt predates kept answers. */
  response: DeliveryResponseView | null;
}

/** The request every attempt of a delivery sends, as shown: nothing secret in it. */
export interface DeliveryRequestView {
  method: string;
  /**
   * The headers sent but the attempt's number and timestamp; signatures and values that use a workspace secret are
   * `[redacted]`. Null when the caller may not read bodies (below Admin).
   */
  headers: Record<string, string> | null;
  /** The body exactly as sent, the same on every attempt; null when the caller may not read bodies (below Admin). */
  body: string | null;
  /** Bytes of the body sent (its `Content-Length`), shown to every role. */
  body_bytes: number;
}

/** One delivery as the application lists it; its request and the answers are on its own view only. */
export interface DeliveryView {
  id: string;
  decision_id: string;
  decision_slug: string;
  execution_id: string;
  destination_key: string;
  kind: DeliveryKind;
  url: string;
  livemode: boolean;
  status: DeliveryStatus;
  /** The current attempt sequence: 1, then one more per resend. */
  sequence: number;
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  completed_at: string | null;
  attempts: DeliveryAttemptView[];
}

/** One delivery on its own: the request sent and what each attempt's receiver answered. */
export interface DeliveryDetailView extends DeliveryView {
  /** Whether headers, bodies and content types are in this view: for Admins and Owners; others get their sizes. */
  bodies_shown: boolean;
  request: DeliveryRequestView;
  attempts: DeliveryAttemptDetailView[];
}

export interface ListDeliveriesReply {
  data: DeliveryView[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface SigningSecretView {
  /** `whsec_…` plus its last four characters. */
  hint: string;
  created_at: string;
  /** While the previous secret still signs beside this one: when it stops. */
  previous_expires_at: string | null;
}

export interface RotatedSigningSecretReply {
  /** The new secret in full, shown this once. */
  secret: string;
  previous_expires_at: string | null;
}

/** A workspace secret as any reply shows it: never its value. */
export interface WorkspaceSecretView {
  name: string;
  created_at: string;
  updated_at: string;
}

export interface ListWorkspaceSecretsReply {
  data: WorkspaceSecretView[];
}

/** As WORKSPACE_SECRET accepts them: the gateway checks the name and the value before they are sent. */
export interface PutWorkspaceSecretRequest extends WorkspaceScoped {
  name: string;
  value: string;
}

/** `created` decides 201 or 200. */
export interface PutWorkspaceSecretReply {
  created: boolean;
  secret: WorkspaceSecretView;
}

export interface WorkspaceSecretRef extends WorkspaceScoped {
  name: string;
}

export interface ResolveWorkspaceSecretsRequest extends WorkspaceScoped {
  names: string[];
}

/** The values of the names that are set; a name that is not set is absent. */
export interface ResolveWorkspaceSecretsReply {
  values: Record<string, string>;
}

export const DELIVERY_SUBJECTS = {
  /** A workspace's deliveries (optionally one decision's), newest first, each with its attempts. */
  list: rpcSubject<ListDeliveriesRequest, ListDeliveriesReply>('v1.delivery.deliveries.list'),
  get: rpcSubject<DeliveryRef, DeliveryDetailView>('v1.delivery.deliveries.get'),
  /** A failed delivery sent again: a new sequence of attempts under the same `dlv_…` id. */
  resend: rpcSubject<DeliveryRef, DeliveryDetailView>('v1.delivery.deliveries.resend'),
  /** The workspace's signing secret, masked (its full value is shown once, by rotate). */
  getSigningSecret: rpcSubject<WorkspaceScoped, SigningSecretView>('v1.delivery.signing-secret.get'),
  rotateSigningSecret: rpcSubject<WorkspaceScoped, RotatedSigningSecretReply>('v1.delivery.signing-secret.rotate'),
  /** The workspace's secrets (names and dates only), filled into destination headers when calls leave. */
  listSecrets: rpcSubject<WorkspaceScoped, ListWorkspaceSecretsReply>('v1.delivery.secrets.list'),
  putSecret: rpcSubject<PutWorkspaceSecretRequest, PutWorkspaceSecretReply>('v1.delivery.secrets.put'),
  deleteSecret: rpcSubject<WorkspaceSecretRef, { deleted: true }>('v1.delivery.secrets.delete'),
  /** Secret values, for the runner's sync agent calls only: no other service may publish it (NATS_PERMISSIONS). */
  resolveSecrets: rpcSubject<ResolveWorkspaceSecretsRequest, ResolveWorkspaceSecretsReply>('v1.delivery.secrets.resolve'),
} as const;
