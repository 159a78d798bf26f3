/** Text for an HTML element or a quoted attribute: the five characters that could end either, as references. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
