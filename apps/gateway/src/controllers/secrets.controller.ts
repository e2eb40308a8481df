import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Res } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { parseValue, SUBJECTS, WORKSPACE_SECRET } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { MemberWorkspace, WorkspaceRole } from '../http/access';
import { objectBody, RequestId } from '../http/request-lifecycle';

/**
 * A workspace's secrets, held by the delivery service and filled into destination headers (`{{secrets.NAME}}`)
 * as calls leave. Secrets need Admin, reading their names included; no reply carries a value.
 */
@Controller('app/v1/workspaces/:ws/secrets')
export class SecretsController {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  @Get()
  @WorkspaceRole('admin')
  list(@RequestId() requestId: string, @MemberWorkspace() ws: string) {
    return this.rpc.call(SUBJECTS.delivery.listSecrets, { workspaceId: ws }, { requestId });
  }

  /** Creates (201) or replaces (200) the secret the path names. */
  @Put(':name')
  @WorkspaceRole('admin')
  async put(
    @RequestId() requestId: string,
    @MemberWorkspace() ws: string,
    @Param('name') name: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const secret = parseValue(WORKSPACE_SECRET, { name, value: objectBody(body).value }, 'The secret is not valid.');
    const answer = await this.rpc.call(SUBJECTS.delivery.putSecret, { workspaceId: ws, ...secret }, { requestId });
    reply.status(answer.created ? 201 : 200);
    return answer.secret;
  }

  @Delete(':name')
  @WorkspaceRole('admin')
  @HttpCode(204)
  async remove(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('name') name: string) {
    await this.rpc.call(SUBJECTS.delivery.deleteSecret, { workspaceId: ws, name }, { requestId });
  }
}
