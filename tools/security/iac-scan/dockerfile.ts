/**
 * Dockerfiles, parsed by dockerfile-ast (the parser of the Dockerfile language server). Stage
 * rules (USER, HEALTHCHECK) look at the final stage, the one the image is made of.
 */
import { DockerfileParser, type From, type Instruction, type Property } from 'dockerfile-ast';
import { DOCKERFILE_RULES as R, finding, SECRET_NAME, type IacFinding, type IacRule } from './rules';

const CURL_PIPE_SHELL = /\b(?:curl|wget)\b[^|;&]*\|\s*(?:sudo\s+)?(?:ba|z|k|da|a)?sh\b/;
const ARCHIVE = /\.(?:tar|tar\.gz|tgz|tar\.bz2|tbz2?|tar\.xz|txz|tar\.zst)$/i;
const ROOT_USER = /^(?:root|0)(?::.*)?$/;

export function scanDockerfile(file: string, text: string): IacFinding[] {
  const dockerfile = DockerfileParser.parse(text);
  const instructions = dockerfile.getInstructions();
  const froms = dockerfile.getFROMs();
  const findings: IacFinding[] = [];
  /** Aliases of the stages so far: `FROM build` names one of them, not an image. */
  const stages = new Set<string>();
  let stage = '';
  const at = (instruction: Instruction, found: IacRule, message: string) =>
    findings.push(finding(found, { file, line: instruction.getRange().start.line + 1, object: stage }, message));

  for (const instruction of instructions) {
    const keyword = instruction.getKeyword().toUpperCase();
    const content = instruction.getArgumentsContent() ?? '';
    if (keyword === 'FROM') {
      const from = instruction as From;
      stage = stageName(from, froms.indexOf(from));
      checkBaseImage(from, stages, (found, message) => at(instruction, found, message));
      const alias = from.getBuildStage();
      if (alias) stages.add(alias.toLowerCase());
    } else if (keyword === 'RUN') {
      if (CURL_PIPE_SHELL.test(content)) at(instruction, R.curlPipeShell, 'A downloaded script is piped straight into a shell');
      if (/(?:^|[\s;&|(])sudo\s/.test(content)) at(instruction, R.sudo, 'sudo in a build step');
      if (/\bchmod\s+(?:-\w+\s+)*0?777\b/.test(content)) at(instruction, R.chmod777, 'chmod 777');
      if (/\bapt-get\s+(?:-\S+\s+)*update\b/.test(content) && !/\b(?:apt-get|apt)\s+(?:-\S+\s+)*install\b/.test(content)) {
        at(instruction, R.aptUpdateAlone, 'apt-get update without an install in the same RUN');
      }
    } else if (keyword === 'ADD') {
      const sources = instruction.getArguments().map((argument) => argument.getValue()).filter((value) => !value.startsWith('--')).slice(0, -1);
      for (const source of sources) {
        if (/^https?:\/\//i.test(source)) at(instruction, R.addUrl, `ADD ${source}`);
        else if (!ARCHIVE.test(source)) at(instruction, R.addLocal, `ADD ${source} copies a plain file`);
      }
    } else if (keyword === 'ENV' || keyword === 'ARG') {
      const properties = (instruction as Instruction & { getProperties(): Property[] }).getProperties();
      for (const property of properties) {
        const value = property.getValue();
        if (SECRET_NAME.test(property.getName()) && value !== null && value !== '') at(instruction, R.secretInEnv, `${keyword} ${property.getName()} has a value`);
      }
    } else if (keyword === 'EXPOSE' && instruction.getArguments().some((argument) => /^22(?:\/tcp)?$/i.test(argument.getValue()))) {
      at(instruction, R.exposeSsh, 'EXPOSE 22');
    }
  }
  findings.push(...finalStageFindings(file, instructions, froms.length - 1));
  return findings.sort((a, b) => a.line - b.line);
}

function checkBaseImage(from: From, stages: Set<string>, report: (rule: IacRule, message: string) => void): void {
  const image = from.getImage() ?? '';
  const name = from.getImageName() ?? '';
  // scratch, earlier stages and images chosen by a build argument have no tag to pin here.
  if (name === '' || name === 'scratch' || stages.has(image.toLowerCase()) || image.includes('$')) return;
  if (from.getImageDigest()) return;
  const tag = from.getImageTag();
  if (!tag) report(R.latestBase, `FROM ${image} has no tag`);
  else if (tag === 'latest') report(R.latestBase, `FROM ${image} uses :latest`);
}

function stageName(from: From, index: number): string {
  return `stage ${from.getBuildStage() ?? index}`;
}

function finalStageFindings(file: string, instructions: Instruction[], finalIndex: number): IacFinding[] {
  const lastFrom = instructions.map((instruction) => instruction.getKeyword().toUpperCase()).lastIndexOf('FROM');
  if (lastFrom === -1) return [];
  const finalStage = instructions.slice(lastFrom);
  const from = finalStage[0] as From;
  const where = (instruction: Instruction) => ({ file, line: instruction.getRange().start.line + 1, object: stageName(from, finalIndex) });
  const findings: IacFinding[] = [];
  const users = finalStage.filter((instruction) => instruction.getKeyword().toUpperCase() === 'USER');
  const lastUser = users[users.length - 1];
  if (!lastUser) findings.push(finding(R.noUser, where(from), 'No USER in the final stage: the container runs as root'));
  else if (ROOT_USER.test(lastUser.getArgumentsContent() ?? '')) findings.push(finding(R.userRoot, where(lastUser), `USER ${lastUser.getArgumentsContent()}`));
  if (from.getImageName() !== 'scratch' && !finalStage.some((instruction) => instruction.getKeyword().toUpperCase() === 'HEALTHCHECK')) {
    findings.push(finding(R.noHealthcheck, where(from), 'No HEALTHCHECK in the final stage'));
  }
  return findings;
}
