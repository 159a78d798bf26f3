/** The MCP SDK's OAuth client storage for one client, in memory, for tests that drive its authorization flow. */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * Registers itself (Dynamic Client Registration) as a public native client unless given the
 * information of a client registered beforehand. The authorization URL it would open is kept for
 * the test's "browser".
 */
export class MemoryClientProvider implements OAuthClientProvider {
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  readonly clientMetadata: OAuthClientMetadata;

  constructor(
    readonly redirectUrl: string,
    public info?: OAuthClientInformationMixed,
  ) {
    this.clientMetadata = {
      client_name: 'E2E Agent',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: info?.client_secret ? 'client_secret_basic' : 'none',
      application_type: 'native',
    } as OAuthClientMetadata;
  }

  clientInformation = () => this.info;
  saveClientInformation = (info: OAuthClientInformationMixed) => void (this.info = info);
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
}
