/** Anything shaped like one of our API key or signing secrets, wherever it appears in a text. */
const API_KEY_ANYWHERE = /\bsk_(user|svc|temp|sig)_[0-9A-Za-z]{28}([0-9A-Za-z]{4})\b/g;

/** Masks our own key secrets in text that is echoed or logged: only the type and last four stay. */
export function maskApiKeys(text: string): string {
  return text.replace(API_KEY_ANYWHERE, 'sk_$1_…$2');
}
