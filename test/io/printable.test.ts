import { escapedBytes, printable, printableMessage, quoted, truncated, unescapedBytes } from '../../lambda/io/printable';
import { HandlerInputError, integerField } from '../../lambda/handler-kit/handler-input';

describe('printable', () => {
  test.each([
    ['an escape sequence that retitles the terminal', '\x1b]0;pwned\x07cat.jpg', '\\x1b]0;pwned\\x07cat.jpg'],
    ['a carriage return that overwrites the line', 'ok.jpg\rFAILED', 'ok.jpg\\rFAILED'],
    ['a line feed that fakes a line', 'a.jpg\nok: 0 problems', 'a.jpg\\nok: 0 problems'],
    ['a tab, NUL and DEL', 'a\tb\0c\x7f', 'a\\tb\\x00c\\x7f'],
    ['a C1 control', 'a\u009bb', 'a\\x9bb'],
    ['a bidi override and a line separator', 'cat\u202egpj.exe\u2028', 'cat\\u{202e}gpj.exe\\u{2028}'],
    ['a lone surrogate', 'a\ud800b', 'a\\u{d800}b'],
  ])('escapes %s', (_, text, shown) => {
    // WHEN / THEN
    expect(printable(text)).toBe(shown);
  });

  test('leaves printable text as it is: accents, CJK, emoji (a surrogate pair), backslashes', () => {
    // GIVEN
    const text = 'café/猫/🐱\\x.jpg';

    // WHEN / THEN
    expect(printable(text)).toBe(text);
  });

  test('a long value is cut and says how long it was; a short one is whole', () => {
    // WHEN / THEN
    expect(truncated('x'.repeat(100_000))).toBe(`${'x'.repeat(200)}… (100000 characters)`);
    expect(quoted('ml.p3.2xlarge')).toBe("'ml.p3.2xlarge'");
    expect(quoted(`\n${'y'.repeat(300)}`, 10)).toBe(`'\\n${'y'.repeat(9)}… (301 characters)'`);
  });

  test('a message has its URL secrets redacted and is escaped', () => {
    // WHEN / THEN
    expect(printableMessage('endpoint https://user:pass@host/ for \x1b[2Jfile')).toBe('endpoint https://***@host/ for \\x1b[2Jfile');
  });
});

describe('escapedBytes', () => {
  test('a name that is not UTF-8 shows its other bytes as \\xNN, and they come back as the same bytes', () => {
    // GIVEN: Latin-1 café, a stray continuation byte, a truncated 3-byte sequence and a valid é
    const name = Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from([0x80]), Buffer.from([0xe2, 0x82]), Buffer.from('é.jpg')]);

    // WHEN
    const text = escapedBytes(name);

    // THEN
    expect(text).toBe('caf\\xe9\\x80\\xe2\\x82é.jpg');
    expect(unescapedBytes(text).equals(name)).toBe(true);
  });
});

describe('handler input errors', () => {
  test('an event value is shown cut short, its URL secrets redacted and its control characters escaped', () => {
    // GIVEN
    const event = { shardName: `s3://AKIAEXAMPLE:${'secretKey'.repeat(20)}@bucket/\u2028${'z'.repeat(500)}` };

    // WHEN / THEN
    expect(() => integerField('shard-packer', event, 'shardName', 0)).toThrow(new HandlerInputError(
      `shard-packer: event field 'shardName' must be an integer of at least 0, got "s3://***@bucket/\\u{2028}${'z'.repeat(62)}… (519 characters)`));
  });
});
