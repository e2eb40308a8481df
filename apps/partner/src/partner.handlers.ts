import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  CloseEmbedSessionRequest,
  CreateEmbedSessionRequest,
  DeleteOwnWorkspaceRequest,
  EmbedSessionLookupRequest,
  ListSubWorkspacesRequest,
  RedeemTicketRequest,
  RevokeEmbedSessionsRequest,
  SetPartnerSettingsRequest,
  SubWorkspaceRefRequest,
  SUBJECTS,
  UpdateSubWorkspaceRequest,
  UpsertSubWorkspaceRequest,
} from '@ds/contracts';
import { EmbedSessionsService } from './embed-sessions.service';
import { SubWorkspacesService } from './sub-workspaces.service';

@Controller()
export class PartnerHandlers {
  constructor(
    private readonly workspaces: SubWorkspacesService,
    private readonly embeds: EmbedSessionsService,
  ) {}

  @MessagePattern(SUBJECTS.partner.setSettings)
  setSettings(@Payload() request: SetPartnerSettingsRequest) {
    return this.workspaces.setSettings(request);
  }

  @MessagePattern(SUBJECTS.partner.upsertWorkspace)
  upsert(@Payload() request: UpsertSubWorkspaceRequest) {
    return this.workspaces.upsert(request.caller, request.body);
  }

  @MessagePattern(SUBJECTS.partner.listWorkspaces)
  list(@Payload() request: ListSubWorkspacesRequest) {
    return this.workspaces.list(request.caller, request.query);
  }

  @MessagePattern(SUBJECTS.partner.getWorkspace)
  get(@Payload() request: SubWorkspaceRefRequest) {
    return this.workspaces.get(request.caller, request.ref);
  }

  @MessagePattern(SUBJECTS.partner.updateWorkspace)
  update(@Payload() request: UpdateSubWorkspaceRequest) {
    return this.workspaces.update(request.caller, request.ref, request.body);
  }

  @MessagePattern(SUBJECTS.partner.deleteWorkspace)
  delete(@Payload() request: SubWorkspaceRefRequest) {
    return this.workspaces.delete(request.caller, request.ref);
  }

  @MessagePattern(SUBJECTS.partner.deleteOwnWorkspace)
  deleteOwn(@Payload() request: DeleteOwnWorkspaceRequest) {
    return this.workspaces.deleteOwn(request.workspaceId);
  }

  @MessagePattern(SUBJECTS.partner.createEmbedSession)
  createEmbedSession(@Payload() request: CreateEmbedSessionRequest) {
    return this.embeds.create(request.caller, request.body);
  }

  @MessagePattern(SUBJECTS.partner.closeEmbedSession)
  async closeEmbedSession(@Payload() request: CloseEmbedSessionRequest) {
    await this.embeds.close(request.caller, request.id);
    return { closed: true };
  }

  @MessagePattern(SUBJECTS.partner.revokeEmbedSessions)
  revokeEmbedSessions(@Payload() request: RevokeEmbedSessionsRequest) {
    return this.embeds.revoke(request.caller, request.body);
  }

  @MessagePattern(SUBJECTS.partner.redeemTicket)
  redeem(@Payload() request: RedeemTicketRequest) {
    return this.embeds.redeem(request.ticket);
  }

  @MessagePattern(SUBJECTS.partner.embedSession)
  session(@Payload() request: EmbedSessionLookupRequest) {
    return this.embeds.session(request.token);
  }
}
