import { Controller, Get, Param } from '@nestjs/common';
import { ServiceError } from '@ds/contracts';
import { TEMPLATES, templateSummary } from '@ds/decision-schema';
import { SignedIn } from '../http/access';

/** The decision templates a new decision can start from; the embedded editor offers them too. */
@Controller('app/v1/templates')
export class TemplatesController {
  @Get()
  @SignedIn('session')
  listTemplates() {
    return { data: TEMPLATES.map(templateSummary) };
  }

  @Get(':id')
  @SignedIn('session')
  getTemplate(@Param('id') id: string) {
    const template = TEMPLATES.find((candidate) => candidate.id === id);
    if (!template) throw new ServiceError('NOT_FOUND', `No template ${id}.`);
    return template;
  }
}
