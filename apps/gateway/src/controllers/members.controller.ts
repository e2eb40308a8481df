import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { MEMBER_BODY, MEMBER_ROLE_BODY, NEW_OWNER_BODY, parseBody } from '@ds/contracts';
import { MemberWorkspace, UserId, WorkspaceRole } from '../http/access';
import { WorkspacesService } from '../workspaces/workspaces.service';

/** Who belongs to a workspace and with which role, the Owner's hand-over, and leaving. */
@Controller('app/v1/workspaces/:ws')
export class MembersController {
  constructor(private readonly workspaces: WorkspacesService) {}

  @Post('members')
  @WorkspaceRole('admin')
  async addMember(@MemberWorkspace() ws: string, @Body() body: unknown) {
    return this.workspaces.addMember(ws, parseBody(MEMBER_BODY, body, 'The member is not valid.'));
  }

  @Get('members')
  @WorkspaceRole('viewer')
  async listMembers(@MemberWorkspace() ws: string) {
    return this.workspaces.members(ws);
  }

  @Put('members/:user')
  @WorkspaceRole('admin')
  async changeMemberRole(@MemberWorkspace() ws: string, @Param('user') user: string, @Body() body: unknown) {
    return this.workspaces.changeRole(ws, user, parseBody(MEMBER_ROLE_BODY, body, 'The role is not valid.').role);
  }

  @Delete('members/:user')
  @WorkspaceRole('admin')
  @HttpCode(204)
  async removeMember(@MemberWorkspace() ws: string, @Param('user') user: string) {
    await this.workspaces.removeMember(ws, user);
  }

  @Post('ownership')
  @WorkspaceRole('owner')
  @HttpCode(200)
  transferOwnership(@MemberWorkspace() ws: string, @UserId() userId: string, @Body() body: unknown) {
    return this.workspaces.transferOwnership(ws, userId, parseBody(NEW_OWNER_BODY, body, 'The new owner is not valid.').user_id);
  }

  @Post('leave')
  @WorkspaceRole('viewer')
  @HttpCode(204)
  async leave(@MemberWorkspace() ws: string, @UserId() userId: string) {
    await this.workspaces.leave(ws, userId);
  }
}
