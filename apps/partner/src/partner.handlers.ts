import { SUBJECTS } from '@ds/contracts';
import { subjectHandlers } from '@ds/platform';
import { EmbedSessionsService } from './embed-sessions.service';
import { SubWorkspacesService } from './sub-workspaces.service';

export const PartnerHandlers = subjectHandlers('PartnerHandlers', { workspaces: SubWorkspacesService, embeds: EmbedSessionsService }, (on) => [
  on(SUBJECTS.partner.setSettings, ({ workspaces }, request) => workspaces.setSettings(request)),
  on(SUBJECTS.partner.upsertWorkspace, ({ workspaces }, request) => workspaces.upsert(request.caller, request.body)),
  on(SUBJECTS.partner.listWorkspaces, ({ workspaces }, request) => workspaces.list(request.caller, request.query)),
  on(SUBJECTS.partner.getWorkspace, ({ workspaces }, request) => workspaces.get(request.caller, request.ref)),
  on(SUBJECTS.partner.updateWorkspace, ({ workspaces }, request) => workspaces.update(request.caller, request.ref, request.body)),
  on(SUBJECTS.partner.deleteWorkspace, ({ workspaces }, request) => workspaces.delete(request.caller, request.ref)),
  on(SUBJECTS.partner.deleteOwnWorkspace, ({ workspaces }, request) => workspaces.deleteOwn(request.workspaceId)),
  on(SUBJECTS.partner.createEmbedSession, ({ embeds }, request) => embeds.create(request.caller, request.body)),
  on(SUBJECTS.partner.closeEmbedSession, async ({ embeds }, request) => {
    await embeds.close(request.caller, request.id);
    return { closed: true as const };
  }),
  on(SUBJECTS.partner.revokeEmbedSessions, ({ embeds }, request) => embeds.revoke(request.caller, request.body)),
  on(SUBJECTS.partner.redeemTicket, ({ embeds }, request) => embeds.redeem(request.ticket)),
  on(SUBJECTS.partner.embedSession, ({ embeds }, request) => embeds.session(request.token)),
]);
