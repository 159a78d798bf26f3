import { HclLines } from './hcl-lines';

const SOURCE = [
  '# a comment with { a brace',
  'resource "aws_security_group" "web" {', // 2
  '  description = "braces } in { a string ${var.x}"',
  '  tags = merge({ Name = "x" }, {',
  '    ingress = "not an attribute of the block"',
  '  })',
  '  user_data = <<-EOT',
  '    ingress {',
  '  EOT',
  '  ingress {', // 10
  '    from_port = 22',
  '  }',
  '  /* ingress { */',
  '  ingress {', // 14
  '    from_port = 80', // 15
  '  }',
  '}',
  'data aws_iam_policy_document "policy" {', // 18
  '  statement {',
  '    "actions" = ["*"]', // 20
  '  }',
  '}',
].join('\n');

describe('HclLines', () => {
  const lines = new HclLines(SOURCE);

  it('finds block headers, quoted or not', () => {
    expect(lines.header('resource.aws_security_group.web')).toBe(2);
    expect(lines.header('data.aws_iam_policy_document.policy')).toBe(18);
    expect(lines.header('resource.aws_security_group.missing')).toBeUndefined();
  });

  it('finds the n-th nested block past strings, heredocs, comments and object expressions', () => {
    expect(lines.attribute(2, ['ingress', 0])).toBe(10);
    expect(lines.attribute(2, ['ingress', 1, 'from_port'])).toBe(15);
    expect(lines.attribute(18, ['statement', 0, 'actions'])).toBe(20);
  });

  it('falls back to the deepest step found, then to the header', () => {
    expect(lines.attribute(2, ['ingress', 1, 'cidr_blocks'])).toBe(14);
    expect(lines.attribute(2, ['egress'])).toBe(2);
  });
});
