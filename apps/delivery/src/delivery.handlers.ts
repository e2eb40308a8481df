import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  DeliveryDetailView,
  DeliveryRef,
  ListDeliveriesRequest,
  PutWorkspaceSecretRequest,
  ResolveWorkspaceSecretsRequest,
  ServiceError,
  SUBJECTS,
  WorkspaceScoped,
  WorkspaceSecretRef,
} from '@ds/contracts';
import { looksLikeId } from '@ds/ids';
import { NatsLink, PLATFORM } from '@ds/platform';
import { withheldBodies } from '@ds/webhooks';
import { DeliveriesStore } from './deliveries.store';
import { publishResend } from './delivery-worker';
import { SigningSecretsService } from './signing-secrets.service';
import { WorkspaceSecretsService } from './workspace-secrets.service';

const STATUSES = ['pending', 'succeeded', 'failed'] as const;

@Controller()
export class DeliveryHandlers {
  constructor(
    private readonly store: DeliveriesStore,
    private readonly secrets: SigningSecretsService,
    private readonly workspaceSecrets: WorkspaceSecretsService,
    @Inject(PLATFORM.nats) private readonly nats: NatsLink,
  ) {}

  @MessagePattern(SUBJECTS.delivery.list)
  list(@Payload() request: ListDeliveriesRequest) {
    const limit = Number.isInteger(request.limit) && request.limit >= 1 && request.limit <= 100 ? request.limit : 20;
    const status = STATUSES.includes(request.status as (typeof STATUSES)[number]) ? request.status : null;
    if (request.decisionId != null && !looksLikeId('dec', request.decisionId)) {
      throw new ServiceError('INVALID_REQUEST', 'The query parameters are not valid.', [{ path: 'decision_id', message: 'is not a decision id' }]);
    }
    return this.store.list({
      workspaceId: request.workspaceId,
      limit,
      cursor: typeof request.cursor === 'string' ? request.cursor : null,
      decisionId: typeof request.decisionId === 'string' ? request.decisionId : null,
      status,
    });
  }

  @MessagePattern(SUBJECTS.delivery.get)
  async get(@Payload() request: DeliveryRef) {
    if (!looksLikeId('dlv', request.deliveryId)) throw notFound();
    const view = await this.store.get(request.workspaceId, request.deliveryId);
    if (!view) throw notFound();
    return request.bodies === true ? view : withheldBodies(view);
  }

  /**
   * Publishes the delivery again, as it was queued, to start a new attempt sequence under the same id. The
   * consumer starts the sequence when it takes the message, so a resend lost between here and the stream
   * changes nothing, and two resends of one failure are one (same message id).
   */
  @MessagePattern(SUBJECTS.delivery.resend)
  async resend(@Payload() request: DeliveryRef): Promise<DeliveryDetailView> {
    if (!looksLikeId('dlv', request.deliveryId)) throw notFound();
    const found = await this.store.message(request.workspaceId, request.deliveryId);
    if (!found) throw notFound();
    if (found.status !== 'failed')
      throw new ServiceError('CONFLICT', `Only a failed delivery can be resent; this one is ${found.status}.`, { status: found.status });
    const sequence = found.sequence + 1;
    try {
      await publishResend(this.nats.connection, found.message, sequence);
    } catch {
      throw new ServiceError('SERVICE_UNAVAILABLE', 'The delivery could not be queued again; try again shortly.');
    }
    const view = (await this.store.get(request.workspaceId, found.message.deliveryId))!;
    const resent: DeliveryDetailView = { ...view, status: 'pending', sequence, attempt_count: 0, completed_at: null };
    return request.bodies === true ? resent : withheldBodies(resent);
  }

  @MessagePattern(SUBJECTS.delivery.getSigningSecret)
  async getSigningSecret(@Payload() request: WorkspaceScoped) {
    const view = await this.secrets.view(request.workspaceId);
    if (!view) throw new ServiceError('NOT_FOUND', 'This workspace has no signing secret yet: rotating creates one, and so does its first delivery.');
    return view;
  }

  @MessagePattern(SUBJECTS.delivery.rotateSigningSecret)
  rotateSigningSecret(@Payload() request: WorkspaceScoped) {
    return this.secrets.rotate(request.workspaceId);
  }

  @MessagePattern(SUBJECTS.delivery.listSecrets)
  listSecrets(@Payload() request: WorkspaceScoped) {
    return this.workspaceSecrets.list(request.workspaceId);
  }

  @MessagePattern(SUBJECTS.delivery.putSecret)
  putSecret(@Payload() request: PutWorkspaceSecretRequest) {
    return this.workspaceSecrets.put(request.workspaceId, request.name, request.value);
  }

  @MessagePattern(SUBJECTS.delivery.deleteSecret)
  deleteSecret(@Payload() request: WorkspaceSecretRef) {
    return this.workspaceSecrets.delete(request.workspaceId, request.name);
  }

  @MessagePattern(SUBJECTS.delivery.resolveSecrets)
  async resolveSecrets(@Payload() request: ResolveWorkspaceSecretsRequest) {
    return { values: await this.workspaceSecrets.values(request.workspaceId, Array.isArray(request.names) ? request.names : []) };
  }
}

function notFound(): ServiceError {
  return new ServiceError('NOT_FOUND', 'No such delivery in this workspace.');
}
