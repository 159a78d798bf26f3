import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ConfigError } from '../config/app-config';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface Sealed {
  key_id: string;
  sealed: string;
}

/** How to make a key, for every message that asks for one. */
export const SECRETS_KEY_HOWTO = "make one with: node -e \"console.log(require('crypto').randomBytes(32).toString('base64'))\"";

/**
 * AES-256-GCM under SECRETS_KEY; older keys (SECRETS_PREVIOUS_KEYS) still open what they sealed.
 * The account and the name are the associated data, so a sealed value moved to another account
 * or name does not open.
 */
export class SecretCipher {
  private readonly keys = new Map<string, Buffer>();
  private current: string | null;

  constructor(current: string | undefined, previous: readonly string[] = []) {
    this.current = current ? this.add('SECRETS_KEY', current) : null;
    for (const key of previous) this.add('SECRETS_PREVIOUS_KEYS', key);
  }

  get currentKeyId(): string | null {
    return this.current;
  }

  get configured(): boolean {
    return this.current !== null;
  }

  /** Takes a key made after start (the embedded key file's first use) as SECRETS_KEY. */
  adopt(key: string): void {
    this.current = this.add('SECRETS_KEY', key);
  }

  knows(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  seal(accountId: string, name: string, value: string): Sealed {
    if (!this.currentKeyId) throw new Error('SECRETS_KEY is not set');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId)!, iv);
    cipher.setAAD(associatedData(accountId, name));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return { key_id: this.currentKeyId, sealed: Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64') };
  }

  /** The value, or throws (unknown key id, or a value that does not authenticate). */
  open(accountId: string, name: string, { key_id, sealed }: Sealed): string {
    const key = this.keys.get(key_id);
    if (!key) throw new Error(`secret '${name}' was sealed with key ${key_id}, which is neither SECRETS_KEY nor in SECRETS_PREVIOUS_KEYS`);
    const bytes = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(associatedData(accountId, name));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  }

  private add(variable: string, encoded: string): string {
    const key = decodeKey(encoded.trim());
    if (!key) throw new ConfigError(`${variable} must be 32 random bytes, base64 or hex encoded; ${SECRETS_KEY_HOWTO}`);
    const keyId = createHash('sha256').update(key).digest('hex').slice(0, 16);
    this.keys.set(keyId, key);
    return keyId;
  }
}

function decodeKey(encoded: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(encoded)) return Buffer.from(encoded, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(encoded)) {
    const key = Buffer.from(encoded, 'base64');
    return key.length === 32 ? key : null;
  }
  return null;
}

function associatedData(accountId: string, name: string): Buffer {
  return Buffer.from(`${accountId}\u0000${name}`, 'utf8');
}
