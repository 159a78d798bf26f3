import type { ToolExample } from '@tos/sdk';

/**
 * Examples run against the fixture workspace of the example world (test/support/example-world/code.part.ts).
 * Each call gets a new serial number and timestamp: those two members vary.
 */
export const SBOM_GENERATE_EXAMPLES: ToolExample[] = [
  {
    name: 'A yarn.lock with its installed packages: components with purl, SHA-512 from integrity, licences from the installed package.json, distribution URL, and the graph',
    input: { path: 'code/yarn-classic' },
    output: {
      bom: {
        $schema: 'http://cyclonedx.org/schema/bom-1.6.schema.json',
        bomFormat: 'CycloneDX',
        specVersion: '1.6',
        version: 1,
        serialNumber: 'urn:uuid:3e671687-395b-41f5-a30f-a58921a69b79',
        metadata: {
          timestamp: '2026-01-01T00:00:00.000Z',
          tools: { components: [{ type: 'application', name: 'tool-orchestration-service sbom-generate', version: '1.0.0' }] },
          component: { type: 'application', name: 'cli-tool', version: '0.3.0', 'bom-ref': 'cli-tool@0.3.0' },
        },
        components: [
          {
            type: 'library',
            name: 'lodash',
            version: '4.17.21',
            'bom-ref': 'pkg:npm/lodash@4.17.21',
            hashes: [
              {
                alg: 'SHA-512',
                content: '7f1ccfc42c2b4de9edeca6219907aad1b256c25cf425e2ff8be9103e24df329d7a9b40365dbd2c32d06aa29ae53289083f1d5be968ef6a6d4f298f9fa16d8755',
              },
            ],
            licenses: [{ license: { id: 'MIT' } }],
            purl: 'pkg:npm/lodash@4.17.21',
            externalReferences: [
              {
                url: 'https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz#e2b2ab00c28eaa0db0d0b7042b849445b987043e',
                type: 'distribution',
              },
            ],
          },
          {
            type: 'library',
            name: 'minimist',
            version: '1.2.5',
            'bom-ref': 'pkg:npm/minimist@1.2.5',
            hashes: [
              {
                alg: 'SHA-512',
                content: 'c16967a6c76913d5172ac62b3bf9ccf33a95824016d400f729ac85607a9ef5f5b6d213fc22b1b1eda77baee62d18d5042261d8050ecb6e3dbcde8cb50262eea1',
              },
            ],
            purl: 'pkg:npm/minimist@1.2.5',
            externalReferences: [
              {
                url: 'https://registry.npmjs.org/minimist/-/minimist-1.2.5.tgz#6a4f4029561e46c6d5d4ba65adc062c220d4fb26',
                type: 'distribution',
              },
            ],
          },
          {
            type: 'library',
            name: 'mkdirp',
            version: '0.5.5',
            'bom-ref': 'pkg:npm/mkdirp@0.5.5',
            hashes: [
              {
                alg: 'SHA-512',
                content: 'f73867d75208bde060e3beaae979ad217cdbb514a4a2a6bb7b34766a47e9b833c8c61f815307e6a396b6bab0c724ee94a4f3c24732b0097ebc10a49ccfcfe73a',
              },
            ],
            licenses: [{ license: { id: 'MIT' } }],
            purl: 'pkg:npm/mkdirp@0.5.5',
            externalReferences: [
              {
                url: 'https://registry.npmjs.org/mkdirp/-/mkdirp-0.5.5.tgz#2e0fbc67952c1ee60b5b3b8605880e212f40d9e8',
                type: 'distribution',
              },
            ],
          },
        ],
        dependencies: [
          { ref: 'cli-tool@0.3.0', dependsOn: ['pkg:npm/lodash@4.17.21', 'pkg:npm/mkdirp@0.5.5'] },
          { ref: 'pkg:npm/lodash@4.17.21' },
          { ref: 'pkg:npm/minimist@1.2.5' },
          { ref: 'pkg:npm/mkdirp@0.5.5', dependsOn: ['pkg:npm/minimist@1.2.5'] },
        ],
      },
      spec_version: '1.6',
      component_count: 3,
      licensed_components: 2,
      lockfiles: [{ file: 'code/yarn-classic/yarn.lock', format: 'yarn', ecosystem: 'npm', packages: 3 }],
    },
    varies: ['bom.serialNumber', 'bom.metadata.timestamp'],
  },
  {
    name: 'Go modules from go.sum as CycloneDX 1.5 (module path as the purl namespace)',
    input: { path: 'code/go-app/go.sum', spec_version: '1.5' },
    output: {
      bom: {
        $schema: 'http://cyclonedx.org/schema/bom-1.5.schema.json',
        bomFormat: 'CycloneDX',
        specVersion: '1.5',
        version: 1,
        serialNumber: 'urn:uuid:3e671687-395b-41f5-a30f-a58921a69b79',
        metadata: {
          timestamp: '2026-01-01T00:00:00.000Z',
          tools: { components: [{ type: 'application', name: 'tool-orchestration-service sbom-generate', version: '1.0.0' }] },
          component: { type: 'application', name: 'example.com/inventory', 'bom-ref': 'example.com/inventory@' },
        },
        components: [
          {
            type: 'library',
            name: 'gin',
            group: 'github.com/gin-gonic',
            version: 'v1.9.1',
            'bom-ref': 'pkg:golang/github.com/gin-gonic/gin@v1.9.1',
            purl: 'pkg:golang/github.com/gin-gonic/gin@v1.9.1',
          },
          {
            type: 'library',
            name: 'net',
            group: 'golang.org/x',
            version: 'v0.0.0-20210226172049-e18ecbb05110',
            'bom-ref': 'pkg:golang/golang.org/x/net@v0.0.0-20210226172049-e18ecbb05110',
            purl: 'pkg:golang/golang.org/x/net@v0.0.0-20210226172049-e18ecbb05110',
          },
          {
            type: 'library',
            name: 'text',
            group: 'golang.org/x',
            version: 'v0.3.5',
            'bom-ref': 'pkg:golang/golang.org/x/text@v0.3.5',
            purl: 'pkg:golang/golang.org/x/text@v0.3.5',
          },
        ],
        dependencies: [
          {
            ref: 'example.com/inventory@',
            dependsOn: ['pkg:golang/github.com/gin-gonic/gin@v1.9.1', 'pkg:golang/golang.org/x/text@v0.3.5'],
          },
          { ref: 'pkg:golang/github.com/gin-gonic/gin@v1.9.1' },
          { ref: 'pkg:golang/golang.org/x/net@v0.0.0-20210226172049-e18ecbb05110' },
          { ref: 'pkg:golang/golang.org/x/text@v0.3.5' },
        ],
      },
      spec_version: '1.5',
      component_count: 3,
      licensed_components: 0,
      lockfiles: [{ file: 'code/go-app/go.sum', format: 'go.sum', ecosystem: 'Go', packages: 3 }],
    },
    varies: ['bom.serialNumber', 'bom.metadata.timestamp'],
  },
];
