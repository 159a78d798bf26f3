import { loadConfig } from '../config/app-config';
import { McpOriginPolicy } from './mcp-origin-policy';

const policy = (env: Record<string, string>) => new McpOriginPolicy(loadConfig(env));

describe('McpOriginPolicy', () => {
  describe('bound to loopback', () => {
    const loopback = policy({ HOST: '127.0.0.1', PORT: '3000', MCP_ALLOWED_ORIGINS: 'https://agent.example' });

    it.each(['localhost:3000', '127.0.0.1:9999', '[::1]:3000', 'localhost', 'agent.example'])('takes Host %s', (host) => {
      expect(loopback.refusal(host, undefined)).toBeNull();
    });

    it.each(['evil.example:3000', 'localhost.evil.example', '10.0.0.7:3000', '', undefined])('refuses Host %p', (host) => {
      expect(loopback.refusal(host, undefined)).toMatch(/DNS rebinding/);
    });

    it.each(['http://localhost:5173', 'http://127.0.0.1:8080', 'http://[::1]:1', 'https://agent.example'])('takes Origin %s', (origin) => {
      expect(loopback.refusal('localhost:3000', origin)).toBeNull();
    });

    it.each(['https://evil.example', 'http://localhost.evil.example', 'null'])('refuses Origin %s', (origin) => {
      expect(loopback.refusal('localhost:3000', origin)).toMatch(/MCP_ALLOWED_ORIGINS/);
    });

    it('gives a pair the same verdict every time, and no other pair its verdict', () => {
      for (let round = 0; round < 2; round++) {
        expect(loopback.refusal('localhost:3000', undefined)).toBeNull();
        expect(loopback.refusal('localhost:3000', 'null')).toMatch(/Origin 'null' may not/);
        expect(loopback.refusal(undefined, undefined)).toMatch(/Host '' is not/);
        expect(loopback.refusal('undefined', undefined)).toMatch(/Host 'undefined' is not/);
      }
    });
  });

  describe('bound elsewhere', () => {
    const exposed = policy({ HOST: '0.0.0.0', PUBLIC_URL: 'https://tools.example.com', MCP_ALLOWED_ORIGINS: 'https://agent.example' });

    it('takes any Host and the configured origins only', () => {
      expect(exposed.refusal('tools.example.com', undefined)).toBeNull();
      expect(exposed.refusal('anything.example', 'https://tools.example.com')).toBeNull();
      expect(exposed.refusal('tools.example.com', 'https://agent.example')).toBeNull();
      expect(exposed.refusal('tools.example.com', 'http://localhost:5173')).toMatch(/MCP_ALLOWED_ORIGINS/);
    });

    it("takes every origin with '*'", () => {
      expect(policy({ HOST: '0.0.0.0', MCP_ALLOWED_ORIGINS: '*' }).refusal('x', 'https://any.example')).toBeNull();
    });
  });
});
