import { Body, Controller, Delete, Get, Headers, HttpCode, Inject, Ip, Param, Post, Put, Query, Req } from '@nestjs/common';
import { FastifyRequest } from 'fastify';
import { Deployer, deployNote, ServiceError, SUBJECTS } from '@ds/contracts';
import { TEMPLATES, templateSummary } from '@ds/decision-schema';
import { PLATFORM, RpcClient } from '@ds/platform';
import { ApiKeysService } from '../auth/api-keys.service';
import { SessionsService } from '../auth/sessions.service';
import { SignInCodesService } from '../auth/sign-in-codes.service';
import { bearerToken } from '../auth/tokens';
import { ApplicationEntry, MemberWorkspace, SignedIn, UserId, WorkspaceRole } from '../http/access';
import { objectBody, RequestId } from '../http/request-lifecycle';
import { WorkspaceDeletionService } from '../workspaces/workspace-deletion.service';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { executionQuery } from './public.controller';

/** The application's programmatic surface (design/application-api.md): sessions, workspaces, keys, decisions. */
@Controller('app/v1')
export class AppController {
  /** Workspaces with a calibration fit this replica is waiting on. */
  private readonly fitsInFlight = new Set<string>();

  constructor(
    private readonly sessions: SessionsService,
    private readonly signInCodes: SignInCodesService,
    private readonly workspaces: WorkspacesService,
    private readonly apiKeys: ApiKeysService,
    private readonly deletion: WorkspaceDeletionService,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
  ) {}

  @Post('auth/sign-up')
  @ApplicationEntry()
  signUp(@Ip() address: string, @Headers('user-agent') userAgent: string | undefined, @Body() body: unknown) {
    return this.sessions.signUp(objectBody(body), address, userAgent ?? null);
  }

  @Post('auth/sign-in')
  @ApplicationEntry()
  @HttpCode(200)
  signIn(@Ip() address: string, @Headers('user-agent') userAgent: string | undefined, @Body() body: unknown) {
    return this.sessions.signIn(objectBody(body), address, userAgent ?? null);
  }

  /** How this installation lets people sign in: the web application offers a code only when e-mail goes out. */
  @Get('auth/methods')
  @ApplicationEntry()
  signInMethods() {
    return this.signInCodes.methods();
  }

  @Post('auth/sign-in-codes')
  @ApplicationEntry()
  @HttpCode(202)
  requestSignInCode(@Ip() address: string, @Body() body: unknown) {
    return this.signInCodes.request(objectBody(body), address);
  }

  @Post('auth/sign-in-codes/verify')
  @ApplicationEntry()
  @HttpCode(200)
  signInWithCode(@Ip() address: string, @Headers('user-agent') userAgent: string | undefined, @Body() body: unknown) {
    return this.signInCodes.verify(objectBody(body), address, userAgent ?? null);
  }

  @Post('auth/sign-out')
  @ApplicationEntry()
  @HttpCode(204)
  async signOut(@Req() request: FastifyRequest) {
    const token = bearerToken(request.headers.authorization);
    if (token) await this.sessions.signOut(token);
  }

  @Post('workspaces')
  @SignedIn()
  async createWorkspace(@UserId() userId: string, @RequestId() requestId: string, @Body() body: unknown) {
    const workspace = await this.workspaces.create(userId, objectBody(body).name);
    const account = await this.rpc.call(SUBJECTS.billing.account, { workspaceId: workspace.id }, { requestId });
    return { ...workspace, plan: account.plan.name };
  }

  @Get('workspaces')
  @SignedIn()
  listWorkspaces(@UserId() userId: string) {
    return this.workspaces.ofUser(userId);
  }

  @Get('workspaces/:ws')
  @WorkspaceRole('viewer')
  async getWorkspace(@MemberWorkspace() ws: string, @RequestId() requestId: string) {
    const workspace = await this.workspaces.describe(ws);
    const account = await this.rpc.call(SUBJECTS.billing.account, { workspaceId: ws }, { requestId });
    return { ...workspace, plan: account.plan.name, account };
  }

  @Delete('workspaces/:ws')
  @WorkspaceRole('owner')
  @HttpCode(204)
  async deleteWorkspace(@MemberWorkspace() ws: string, @RequestId() requestId: string) {
    await this.deletion.delete(ws, requestId);
  }

  /** The account (as `GET /v1/me` gives it) with the period's billed decisions per day, from the ledger's own entries. */
  @Get('workspaces/:ws/usage')
  @WorkspaceRole('viewer')
  usageByDay(@MemberWorkspace() ws: string, @RequestId() requestId: string) {
    return this.rpc.call(SUBJECTS.billing.usageByDay, { workspaceId: ws }, { requestId });
  }

  /** How long the execution log is kept: the plan's, or less by the workspace's own setting. */
  @Get('workspaces/:ws/execution-retention')
  @WorkspaceRole('viewer')
  executionRetention(@MemberWorkspace() ws: string, @RequestId() requestId: string) {
    return this.rpc.call(SUBJECTS.billing.getExecutionRetention, { workspaceId: ws }, { requestId });
  }

  @Put('workspaces/:ws/execution-retention')
  @WorkspaceRole('admin')
  setExecutionRetention(@MemberWorkspace() ws: string, @RequestId() requestId: string, @Body() body: unknown) {
    // The ledger checks `days` against the plan; a missing one arrives as undefined and is refused there.
    return this.rpc.call(SUBJECTS.billing.setExecutionRetention, { workspaceId: ws, days: objectBody(body).days }, { requestId });
  }

  /**
   * The Owner's own cap on what the workspace spends past its included volume per billing cycle (the spec: billing
   * needs the Owner); operators set the same through /admin/v1. Answers the account, as GET workspaces/:ws shows it.
   */
  @Put('workspaces/:ws/spend-cap')
  @WorkspaceRole('owner')
  setSpendCap(@MemberWorkspace() ws: string, @RequestId() requestId: string, @Body() body: unknown) {
    return this.rpc.call(SUBJECTS.billing.setSpendCap, { workspaceId: ws, spend_cap_cents: objectBody(body).spend_cap_cents }, { requestId });
  }

  @Post('workspaces/:ws/members')
  @WorkspaceRole('admin')
  async addMember(@MemberWorkspace() ws: string, @Body() body: unknown) {
    return this.workspaces.addMember(ws, objectBody(body));
  }

  @Get('workspaces/:ws/members')
  @WorkspaceRole('viewer')
  async listMembers(@MemberWorkspace() ws: string) {
    return this.workspaces.members(ws);
  }

  @Put('workspaces/:ws/members/:user')
  @WorkspaceRole('admin')
  async changeMemberRole(@MemberWorkspace() ws: string, @Param('user') user: string, @Body() body: unknown) {
    return this.workspaces.changeRole(ws, user, objectBody(body).role);
  }

  @Delete('workspaces/:ws/members/:user')
  @WorkspaceRole('admin')
  @HttpCode(204)
  async removeMember(@MemberWorkspace() ws: string, @Param('user') user: string) {
    await this.workspaces.removeMember(ws, user);
  }

  @Post('workspaces/:ws/ownership')
  @WorkspaceRole('owner')
  @HttpCode(200)
  transferOwnership(@MemberWorkspace() ws: string, @UserId() userId: string, @Body() body: unknown) {
    return this.workspaces.transferOwnership(ws, userId, objectBody(body).user_id);
  }

  @Post('workspaces/:ws/leave')
  @WorkspaceRole('viewer')
  @HttpCode(204)
  async leave(@MemberWorkspace() ws: string, @UserId() userId: string) {
    await this.workspaces.leave(ws, userId);
  }

  @Get('templates')
  @SignedIn('session')
  listTemplates() {
    return { data: TEMPLATES.map(templateSummary) };
  }

  @Get('templates/:id')
  @SignedIn('session')
  getTemplate(@Param('id') id: string) {
    const template = TEMPLATES.find((candidate) => candidate.id === id);
    if (!template) throw new ServiceError('NOT_FOUND', `No template ${id}.`);
    return template;
  }

  @Post('workspaces/:ws/api-keys')
  @WorkspaceRole('admin')
  async createApiKey(@UserId() userId: string, @MemberWorkspace() ws: string, @Body() body: unknown) {
    return this.apiKeys.create(ws, userId, objectBody(body));
  }

  @Get('workspaces/:ws/api-keys')
  @WorkspaceRole('admin')
  async listApiKeys(@MemberWorkspace() ws: string) {
    return this.apiKeys.list(ws);
  }

  @Delete('workspaces/:ws/api-keys/:id')
  @WorkspaceRole('admin')
  @HttpCode(204)
  async revokeApiKey(@MemberWorkspace() ws: string, @Param('id') id: string) {
    await this.apiKeys.revoke(ws, id);
  }

  @Get('workspaces/:ws/decisions')
  @WorkspaceRole('viewer', 'decisions:read')
  async listDecisions(@RequestId() requestId: string, @MemberWorkspace() ws: string) {
    return this.rpc.call(SUBJECTS.runner.listDecisions, { workspaceId: ws }, { requestId });
  }

  @Post('workspaces/:ws/decisions')
  @WorkspaceRole('member', 'decisions:write')
  async createDecision(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Body() body: unknown) {
    const input = objectBody(body);
    return this.rpc.call(
      SUBJECTS.runner.createDecision,
      { workspaceId: ws, slug: input.slug, name: input.name, description: input.description, schema: input.schema },
      { requestId },
    );
  }

  @Put('workspaces/:ws/decisions/:id/draft')
  @WorkspaceRole('member', 'decisions:write')
  async saveDraft(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Body() body: unknown) {
    const input = objectBody(body);
    return this.rpc.call(SUBJECTS.runner.saveDraft, { workspaceId: ws, decisionId: id, schema: input.schema, revision: input.revision }, { requestId });
  }

  @Post('workspaces/:ws/decisions/:id/deploy')
  @WorkspaceRole('admin', 'decisions:deploy')
  async deploy(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Req() request: FastifyRequest, @Body() body: unknown) {
    const note = deployNote(body);
    return this.rpc.call(SUBJECTS.runner.deploy, { workspaceId: ws, decisionId: id, deployedBy: await this.deployer(request), note }, { requestId });
  }

  /** Every deployed version, newest first, with who deployed it and its contract changes; like deploy, Admin. */
  @Get('workspaces/:ws/decisions/:id/versions')
  @WorkspaceRole('admin', 'decisions:deploy')
  listVersions(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    return this.rpc.call(SUBJECTS.runner.listVersions, { workspaceId: ws, decisionId: id }, { requestId });
  }

  /** Two versions side by side: both schemas, the schema diff and the contract diff (`?from=N&to=M`). */
  @Get('workspaces/:ws/decisions/:id/versions/compare')
  @WorkspaceRole('admin', 'decisions:deploy')
  compareVersions(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(SUBJECTS.runner.compareVersions, { workspaceId: ws, decisionId: id, from: query.from, to: query.to }, { requestId });
  }

  /**
   * What deploying the draft, or rolling back to `?version=N`, would change against the active version, in the
   * editor's words, with the headers that name a secret the workspace does not have.
   */
  @Get('workspaces/:ws/decisions/:id/review')
  @WorkspaceRole('admin', 'decisions:deploy')
  reviewVersion(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(SUBJECTS.runner.reviewVersion, { workspaceId: ws, decisionId: id, version: query.version }, { requestId });
  }

  /** Deploys a copy of an earlier version as the next version. */
  @Post('workspaces/:ws/decisions/:id/versions/:version/rollback')
  @WorkspaceRole('admin', 'decisions:deploy')
  async rollback(
    @RequestId() requestId: string,
    @MemberWorkspace() ws: string,
    @Param('id') id: string,
    @Param('version') version: string,
    @Req() request: FastifyRequest,
  ) {
    return this.rpc.call(SUBJECTS.runner.rollback, { workspaceId: ws, decisionId: id, version, deployedBy: await this.deployer(request) }, { requestId });
  }

  /** The decision's shadow and its comparison with the active version; like deploy, Admin. */
  @Get('workspaces/:ws/decisions/:id/shadow')
  @WorkspaceRole('admin', 'decisions:deploy')
  getShadow(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    return this.rpc.call(SUBJECTS.runner.getShadow, { workspaceId: ws, decisionId: id }, { requestId });
  }

  /** Starts a shadow (`{ rate, version? }`; without a version the draft is deployed as the shadow) or changes its rate. */
  @Post('workspaces/:ws/decisions/:id/shadow')
  @WorkspaceRole('admin', 'decisions:deploy')
  async startShadow(
    @RequestId() requestId: string,
    @MemberWorkspace() ws: string,
    @Param('id') id: string,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
  ) {
    const input = objectBody(body);
    return this.rpc.call(
      SUBJECTS.runner.startShadow,
      { workspaceId: ws, decisionId: id, version: input.version, rate: input.rate, startedBy: await this.deployer(request) },
      { requestId },
    );
  }

  /** Makes the shadow's version the active one: a deploy of that version. */
  @Post('workspaces/:ws/decisions/:id/shadow/promote')
  @WorkspaceRole('admin', 'decisions:deploy')
  async promoteShadow(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Req() request: FastifyRequest) {
    return this.rpc.call(SUBJECTS.runner.promoteShadow, { workspaceId: ws, decisionId: id, deployedBy: await this.deployer(request) }, { requestId });
  }

  @Delete('workspaces/:ws/decisions/:id/shadow')
  @WorkspaceRole('admin', 'decisions:deploy')
  @HttpCode(204)
  async stopShadow(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string): Promise<void> {
    await this.rpc.call(SUBJECTS.runner.stopShadow, { workspaceId: ws, decisionId: id }, { requestId });
  }

  /** Who is deploying: the signed-in user, or the embedded editor's user. */
  private async deployer(request: FastifyRequest): Promise<Deployer | null> {
    const caller = request.caller;
    if (caller.kind === 'embed') return { user_id: caller.session.user.id, email: caller.session.user.email };
    if (caller.kind === 'user') return { user_id: caller.userId, email: await this.workspaces.emailOf(caller.userId) };
    return null;
  }

  @Put('workspaces/:ws/decisions/:id/endpoint')
  @WorkspaceRole('admin', 'decisions:deploy')
  async setEndpoint(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Body() body: unknown) {
    return this.rpc.call(SUBJECTS.runner.setEndpoint, { workspaceId: ws, decisionId: id, enabled: objectBody(body).enabled }, { requestId });
  }

  /** `:id` is the decision's id or its slug: embed start paths name decisions by id, the application's links by slug. */
  @Get('workspaces/:ws/decisions/:id')
  @WorkspaceRole('viewer', 'decisions:read')
  getDecision(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    return this.rpc.call(SUBJECTS.runner.getDecision, { workspaceId: ws, decision: id }, { requestId });
  }

  @Post('workspaces/:ws/decisions/:id/playground')
  @WorkspaceRole('member', 'decisions:write')
  @HttpCode(200)
  playground(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Body() body: unknown) {
    const input = objectBody(body);
    // A 429's details.retryAfter becomes its Retry-After where every error is answered.
    return this.rpc.call(SUBJECTS.runner.playground, { workspaceId: ws, decisionId: id, version: input.version ?? null, state: input.state }, { requestId });
  }

  /** Charts of one decision over `from`..`to` (ISO 8601; the last 24 hours by default), read from the runner's rollups. */
  @Get('workspaces/:ws/decisions/:id/overview')
  @WorkspaceRole('viewer', 'executions:read')
  decisionOverview(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(SUBJECTS.runner.decisionOverview, { workspaceId: ws, decision: id, from: query.from, to: query.to }, { requestId });
  }

  @Get('workspaces/:ws/executions')
  @WorkspaceRole('viewer', 'executions:read')
  listExecutions(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Query() query: Record<string, unknown>) {
    // A person reading the list is looking at callers' runs first; the other sources are a filter away.
    return this.rpc.call(SUBJECTS.runner.listExecutions, { workspaceId: ws, ...executionQuery(query, ['live']) }, { requestId });
  }

  /** The state an execution was called with (where its version stores inputs), to try again in the playground. */
  @Get('workspaces/:ws/executions/:id/input')
  @WorkspaceRole('member', 'decisions:write')
  executionInput(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    return this.rpc.call(SUBJECTS.runner.executionInput, { workspaceId: ws, executionId: id }, { requestId });
  }

  /** A person reviewing an execution records what was right; embedded editors need the permission to edit decisions. */
  @Put('workspaces/:ws/executions/:id/outcome')
  @WorkspaceRole('member', 'decisions:write')
  recordOutcome(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Body() body: unknown) {
    return this.rpc.call(SUBJECTS.runner.recordOutcome, { workspaceId: ws, executionId: id, body: objectBody(body) }, { requestId });
  }

  @Get('workspaces/:ws/decisions/:id/quality')
  @WorkspaceRole('viewer', 'decisions:read')
  quality(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(
      SUBJECTS.runner.qualityReport,
      { workspaceId: ws, decisionId: id, version: query.version, from: query.from, to: query.to },
      { requestId },
    );
  }

  @Post('workspaces/:ws/decisions/:id/calibration')
  @WorkspaceRole('member', 'decisions:write')
  @HttpCode(200)
  async fitCalibration(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Body() body: unknown) {
    const version = objectBody(body).version;
    // The runner refuses a second fit of a workspace across every replica; one this gateway is waiting on is
    // refused here, so that a loop of refused fits never reaches NATS or the runner.
    if (this.fitsInFlight.has(ws)) throw new ServiceError('CONFLICT', 'A calibration fit of this workspace is running; try again when it has finished.');
    this.fitsInFlight.add(ws);
    try {
      return await this.rpc.call(SUBJECTS.runner.fitCalibration, { workspaceId: ws, decisionId: id, version }, { requestId });
    } finally {
      this.fitsInFlight.delete(ws);
    }
  }
}
