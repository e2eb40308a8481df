import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { INVITATION_BODY, INVITATION_TOKEN_BODY, parseBody } from '@ds/contracts';
import { ApplicationEntry, MemberWorkspace, SignedIn, UserId, WorkspaceRole } from '../http/access';
import { InvitationsService } from '../workspaces/invitations.service';

const TOKEN_MISSING = 'The invitation token is missing.';

/** Inviting people to a workspace (Admin: members are settings) and joining by an invitation's link. */
@Controller('app/v1')
export class InvitationsController {
  constructor(private readonly invitations: InvitationsService) {}

  @Post('workspaces/:ws/invitations')
  @WorkspaceRole('admin')
  invite(@MemberWorkspace() ws: string, @UserId() userId: string, @Body() body: unknown) {
    return this.invitations.invite(ws, userId, parseBody(INVITATION_BODY, body, 'The invitation is not valid.'));
  }

  @Get('workspaces/:ws/invitations')
  @WorkspaceRole('admin')
  pending(@MemberWorkspace() ws: string) {
    return this.invitations.pending(ws);
  }

  @Delete('workspaces/:ws/invitations/:id')
  @WorkspaceRole('admin')
  @HttpCode(204)
  async revoke(@MemberWorkspace() ws: string, @Param('id') id: string) {
    await this.invitations.revoke(ws, id);
  }

  /** Read before signing in or up, so the page can say who invites whom to what; the token travels in the body, out of logs. */
  @Post('invitations/preview')
  @ApplicationEntry()
  @HttpCode(200)
  preview(@Body() body: unknown) {
    return this.invitations.preview(parseBody(INVITATION_TOKEN_BODY, body, TOKEN_MISSING).token);
  }

  @Post('invitations/accept')
  @SignedIn()
  @HttpCode(200)
  accept(@UserId() userId: string, @Body() body: unknown) {
    return this.invitations.accept(userId, parseBody(INVITATION_TOKEN_BODY, body, TOKEN_MISSING).token);
  }
}
