import { Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { DeliveryDetailView, DeliveryStatus, ServiceError, SUBJECTS, ValidationIssue } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { withheldBodies } from '@ds/webhooks';
import { Role } from '../entities';
import { MemberRole, MemberWorkspace, WorkspaceRole } from '../http/access';
import { RequestId } from '../http/request-lifecycle';
import { roleReaches } from '../workspaces/roles';

/**
 * A workspace's outgoing deliveries and its signing secret. Reading deliveries is open to every member, but what
 * was sent and answered (headers, bodies, content types) only to Admins and Owners: others see status, timing and
 * sizes. Resending one is a change (Member); the signing secret is a secret (Admin).
 */
@Controller('app/v1/workspaces/:ws')
export class DeliveriesController {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  @Get('deliveries')
  @WorkspaceRole('viewer')
  list(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(SUBJECTS.delivery.list, { workspaceId: ws, ...deliveryQuery(query, true) }, { requestId });
  }

  @Get('decisions/:id/deliveries')
  @WorkspaceRole('viewer')
  listForDecision(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') decisionId: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(SUBJECTS.delivery.list, { workspaceId: ws, ...deliveryQuery(query, false), decisionId }, { requestId });
  }

  @Get('deliveries/:id')
  @WorkspaceRole('viewer')
  async get(@RequestId() requestId: string, @MemberWorkspace() ws: string, @MemberRole() role: Role, @Param('id') deliveryId: string) {
    const bodies = mayReadBodies(role);
    return shownTo(bodies, await this.rpc.call(SUBJECTS.delivery.get, { workspaceId: ws, deliveryId, bodies }, { requestId }));
  }

  @Post('deliveries/:id/resend')
  @WorkspaceRole('member')
  @HttpCode(202)
  async resend(@RequestId() requestId: string, @MemberWorkspace() ws: string, @MemberRole() role: Role, @Param('id') deliveryId: string) {
    const bodies = mayReadBodies(role);
    return shownTo(bodies, await this.rpc.call(SUBJECTS.delivery.resend, { workspaceId: ws, deliveryId, bodies }, { requestId }));
  }

  @Get('signing-secret')
  @WorkspaceRole('admin')
  signingSecret(@RequestId() requestId: string, @MemberWorkspace() ws: string) {
    return this.rpc.call(SUBJECTS.delivery.getSigningSecret, { workspaceId: ws }, { requestId });
  }

  @Post('signing-secret/rotate')
  @WorkspaceRole('admin')
  rotateSigningSecret(@RequestId() requestId: string, @MemberWorkspace() ws: string) {
    return this.rpc.call(SUBJECTS.delivery.rotateSigningSecret, { workspaceId: ws }, { requestId });
  }
}

function mayReadBodies(role: Role): boolean {
  return roleReaches(role, 'admin');
}

/** Withheld here too, so that a delivery service of the previous version, which sends bodies to anyone, shows none. */
function shownTo(bodies: boolean, view: DeliveryDetailView): DeliveryDetailView {
  return bodies ? view : withheldBodies(view);
}

const STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed'];

/** `limit` (1..100, default 20), `cursor`, `status` and, on the workspace list, `decision_id`, as Stripe-style list parameters. */
export function deliveryQuery(query: Record<string, unknown>, allowDecision: boolean) {
  const issues: ValidationIssue[] = [];
  let limit = 20;
  if (query.limit !== undefined) {
    limit = typeof query.limit === 'string' && /^\d{1,3}$/.test(query.limit) ? Number(query.limit) : NaN;
    if (!(limit >= 1 && limit <= 100)) issues.push({ path: 'limit', message: 'must be an integer from 1 to 100' });
  }
  const cursor = query.cursor;
  if (cursor !== undefined && (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 200))
    issues.push({ path: 'cursor', message: 'is not a valid cursor' });
  const status = query.status;
  if (status !== undefined && !STATUSES.includes(status as DeliveryStatus)) issues.push({ path: 'status', message: 'must be pending, succeeded or failed' });
  const decisionId = allowDecision ? query.decision_id : undefined;
  if (decisionId !== undefined && (typeof decisionId !== 'string' || decisionId.length === 0 || decisionId.length > 64))
    issues.push({ path: 'decision_id', message: 'must be a decision id' });
  if (issues.length > 0) throw new ServiceError('INVALID_REQUEST', 'The query parameters are not valid.', issues);
  return {
    limit,
    cursor: (cursor as string | undefined) ?? null,
    status: (status as DeliveryStatus | undefined) ?? null,
    decisionId: (decisionId as string | undefined) ?? null,
  };
}
