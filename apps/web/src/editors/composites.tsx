import { useContext } from 'react';
import { limits, optionValues, renameReferences, SchemaIssue, termFor } from '@ds/decision-schema';
import { useApp } from '../context';
import { fieldId } from '../lib/issues';
import { freshKey, removeItem } from '../lib/lists';
import { EditorContext, fieldBinding, FieldIssues, NumberField, SelectField, TextField, Update } from './fields';
import { focusSoon, ItemControls } from './parts';

type Json = any;

/** Composites: a key, a description and weighted terms, each naming a question (and, for a choice, an option). */
export function CompositesEditor({ doc, issues, update }: { doc: Json; issues: SchemaIssue[]; update: Update }) {
  const bound = fieldBinding(issues, update);
  const { t } = useApp();
  const { markFresh } = useContext(EditorContext);
  const composites: Json[] = Array.isArray(doc.composites) ? doc.composites : [];
  const questions: Json[] = (Array.isArray(doc.questions) ? doc.questions : []).filter((q: Json) => typeof q?.key === 'string' && q.key !== '');
  const questionNamed = (key: unknown) => questions.find((question) => question.key === key);
  return (
    <section className="card" aria-labelledby="sec-composites">
      <h2 tabIndex={-1} id="sec-composites">
        {t('ed.composites')}
      </h2>
      <p className="muted small">{t('comp.lead')}</p>
      <FieldIssues issues={issues} path="composites" />
      {composites.length === 0 && <p className="muted">{t('comp.none')}</p>}
      {composites.map((composite, index) => {
        const base = ['composites', index];
        const terms: Json[] = Array.isArray(composite?.terms) ? composite.terms : [];
        const name = `${t('comp.n', { n: index + 1 })}${composite?.key ? ` (${composite.key})` : ''}`;
        return (
          <fieldset key={index} className="rule" id={fieldId(base.join('.'))} tabIndex={-1}>
            <legend>{name}</legend>
            <ItemControls
              afterRemove="sec-composites"
              listPath={['composites']}
              index={index}
              count={composites.length}
              name={name}
              items={composites}
              update={update}
              labels={{ remove: t('comp.remove') }}
            />
            <FieldIssues issues={issues} path={base.join('.')} />
            <div className="grid compact">
              <TextField
                label={t('comp.key')}
                {...bound([...base, 'key'], composite?.key)}
                // Rules and destination conditions follow the composite to its new key.
                update={(path, value) => update(path, value, (next) => renameReferences(next, 'composite', composite?.key, value))}
              />
              <TextField
                label={t('comp.description')}
                {...bound([...base, 'description'], composite?.description)}
                update={(path, value) => update(path, value === '' ? undefined : value)}
              />
            </div>
            <h3>{t('comp.terms')}</h3>
            <FieldIssues issues={issues} path={[...base, 'terms'].join('.')} />
            {terms.map((term, i) => {
              const termPath = [...base, 'terms', i];
              const question = questionNamed(term?.question);
              const legend = t('comp.termOf', { n: i + 1, owner: name });
              return (
                <fieldset key={i} className="condition" id={fieldId(termPath.join('.'))} tabIndex={-1}>
                  <legend>{t('comp.term', { n: i + 1 })}</legend>
                  <div className="grid compact">
                    <SelectField
                      label={t('comp.question')}
                      {...bound([...termPath, 'question'], term?.question)}
                      update={(path, key) => {
                        const chosen = questionNamed(key);
                        if (chosen) update(termPath, termFor(chosen, term));
                      }}
                      options={[
                        ...(question
                          ? []
                          : ([[String(term?.question ?? ''), t('cond.unknown', { name: String(term?.question ?? '') })]] as Array<[string, string]>)),
                        ...questions.map((q): [string, string] => [q.key, `${q.key} (${q.kind})`]),
                      ]}
                    />
                    {question?.kind === 'choice' && (
                      <SelectField
                        label={t('comp.option')}
                        {...bound([...termPath, 'option'], term?.option)}
                        options={optionValues(question).map((value): [string, string] => [value, value])}
                      />
                    )}
                    <NumberField label={t('comp.weight')} {...bound([...termPath, 'weight'], term?.weight)} min={-100} max={100} />
                  </div>
                  <button type="button" className="link" onClick={() => update([...base, 'terms'], removeItem(terms, i))}>
                    {t('comp.termRemove')} <span className="visually-hidden">{legend}</span>
                  </button>
                </fieldset>
              );
            })}
            {terms.length < limits.TERMS_MAX && (
              <button
                type="button"
                disabled={questions.length === 0}
                onClick={() => {
                  markFresh([...base, 'terms', terms.length].join('.'));
                  update([...base, 'terms'], [...terms, termFor(questions[0])]);
                  focusSoon(fieldId([...base, 'terms', terms.length, 'question'].join('.')));
                }}
              >
                {t('comp.termAdd')} <span className="visually-hidden">({name})</span>
              </button>
            )}
          </fieldset>
        );
      })}
      <div className="actions">
        <button
          type="button"
          disabled={questions.length === 0 || composites.length >= limits.COMPOSITES_MAX}
          onClick={() => {
            const key = freshKey(
              'composite',
              composites.map((composite) => composite?.key),
            );
            markFresh(`composites.${composites.length}`);
            update(['composites'], [...composites, { key, terms: [termFor(questions[0])] }]);
            focusSoon(fieldId(`composites.${composites.length}.key`));
          }}
        >
          {t('comp.add')}
        </button>
      </div>
    </section>
  );
}
