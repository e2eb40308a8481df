import type { Change } from '@ds/decision-schema';
import { useApp } from '../context';

/** A list of JSON changes (added, removed, changed at a path), as the deploy and history screens show them. */
export function ChangeList({ changes }: { changes: Change[] }) {
  const { t } = useApp();
  return (
    <ul className="diff">
      {changes.map((change) => (
        <li key={change.path} className={`diff-${change.kind}`}>
          <span className="badge">{t(`dep.${change.kind}`)}</span> <code>{change.path}</code>
          {change.kind === 'changed' && (
            <>
              : <del>{JSON.stringify(change.before)}</del> → <ins>{JSON.stringify(change.after)}</ins>
            </>
          )}
          {change.kind === 'added' && (
            <>
              {' '}
              <ins>{JSON.stringify(change.after)}</ins>
            </>
          )}
          {change.kind === 'removed' && (
            <>
              {' '}
              <del>{JSON.stringify(change.before)}</del>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}
