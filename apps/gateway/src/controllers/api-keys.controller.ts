import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { API_KEY_BODY, parseBody } from '@ds/contracts';
import { ApiKeysService } from '../auth/api-keys.service';
import { MemberWorkspace, UserId, WorkspaceRole } from '../http/access';

/** The workspace's API keys, for `/v1` and `/mcp`; Admin, like the other settings. */
@Controller('app/v1/workspaces/:ws/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @WorkspaceRole('admin')
  async createApiKey(@UserId() userId: string, @MemberWorkspace() ws: string, @Body() body: unknown) {
    return this.apiKeys.create(ws, userId, parseBody(API_KEY_BODY, body, 'The API key is not valid.'));
  }

  @Get()
  @WorkspaceRole('admin')
  async listApiKeys(@MemberWorkspace() ws: string) {
    return this.apiKeys.list(ws);
  }

  @Delete(':id')
  @WorkspaceRole('admin')
  @HttpCode(204)
  async revokeApiKey(@MemberWorkspace() ws: string, @Param('id') id: string) {
    await this.apiKeys.revoke(ws, id);
  }
}
