/**
 * The page an iframe shows when its launch URL or session can no longer be used (used, expired, revoked or
 * closed): self-contained (no script, no external resource), and saying what to do rather than what failed.
 */
export function reopenPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Session ended</title>
<style>
  :root { color-scheme: light dark; --fg: #1f2430; --muted: #5c6373; --bg: #f7f8fa; --card: #ffffff; --line: #e3e6eb; }
  @media (prefers-color-scheme: dark) { :root { --fg: #e8eaef; --muted: #a3a9b6; --bg: #16181d; --card: #1f2229; --line: #2d313a; } }
  html, body { height: 100%; margin: 0; }
  body { display: flex; align-items: center; justify-content: center; background: var(--bg); color: var(--fg);
         font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  main { max-width: 26rem; margin: 1.5rem; padding: 2rem; background: var(--card); border: 1px solid var(--line);
         border-radius: 12px; text-align: center; }
  h1 { font-size: 1.15rem; margin: 0 0 .5rem; }
  p { margin: 0; color: var(--muted); }
</style>
</head>
<body>
<main data-embed-state="ended">
  <h1>This editor session has ended</h1>
  <p>Reopen the editor from your app to continue.</p>
</main>
</body>
</html>
`;
}
