import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { DeleteProviderKeyReply, EngineSettingsReply, GetProviderKeyReply, ProviderKeyView, ServiceError, SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { objectBody, RequestId, UserId } from '../http/edge';
import { WorkspacesService } from '../workspaces/workspaces.service';

/** A workspace's own engine key and whether its runs use it (Admin: provider keys are settings). */
@Controller('app/v1/workspaces/:ws')
export class EngineSettingsController {
  constructor(
    private readonly workspaces: WorkspacesService,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
  ) {}

  @Put('provider-key')
  async setProviderKey(@UserId() userId: string, @RequestId() requestId: string, @Param('ws') ws: string, @Body() body: unknown) {
    await this.workspaces.requireRole(ws, userId, 'admin');
    const input = objectBody(body);
    return this.rpc.call<ProviderKeyView>(SUBJECTS.engine.setProviderKey, { workspaceId: ws, provider: input.provider, apiKey: input.api_key }, { requestId });
  }

  @Get('provider-key')
  async getProviderKey(@UserId() userId: string, @RequestId() requestId: string, @Param('ws') ws: string) {
    await this.workspaces.requireRole(ws, userId, 'admin');
    const key = await this.rpc.call<GetProviderKeyReply>(SUBJECTS.engine.getProviderKey, { workspaceId: ws }, { requestId });
    if (!key) throw new ServiceError('NOT_FOUND', 'This workspace has no provider key saved.');
    return key;
  }

  @Delete('provider-key')
  @HttpCode(204)
  async deleteProviderKey(@UserId() userId: string, @RequestId() requestId: string, @Param('ws') ws: string) {
    await this.workspaces.requireRole(ws, userId, 'admin');
    const reply = await this.rpc.call<DeleteProviderKeyReply>(SUBJECTS.engine.deleteProviderKey, { workspaceId: ws }, { requestId });
    if (!reply.deleted) throw new ServiceError('NOT_FOUND', 'This workspace has no provider key saved.');
  }

  @Get('engine-settings')
  async getSettings(@UserId() userId: string, @RequestId() requestId: string, @Param('ws') ws: string) {
    await this.workspaces.requireRole(ws, userId, 'admin');
    return toPublic(await this.rpc.call<EngineSettingsReply>(SUBJECTS.engine.getSettings, { workspaceId: ws }, { requestId }));
  }

  @Put('engine-settings')
  async setSettings(@UserId() userId: string, @RequestId() requestId: string, @Param('ws') ws: string, @Body() body: unknown) {
    await this.workspaces.requireRole(ws, userId, 'admin');
    const input = objectBody(body);
    return toPublic(await this.rpc.call<EngineSettingsReply>(SUBJECTS.engine.setSettings, { workspaceId: ws, useOwnKey: input.use_own_key }, { requestId }));
  }
}

function toPublic(settings: EngineSettingsReply) {
  return { use_own_key: settings.useOwnKey, provider_key: settings.providerKey, llm_provider: settings.llmProvider };
}
