import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LocalDirectorySource } from '../../lambda/io/local-directory';
import { listAll, ScratchBuffer } from '../../lambda/io/storage';
import { isUnreadableInput } from '../../lambda/io/unreadable-input';
import { compareCodePointOrder } from '../../lambda/io/key-order';
import { temporaryFolders, writeFiles } from '../support/local-files';

const folder = temporaryFolders();

describe('LocalDirectorySource.list', () => {
  test('lists files in key code-point order, though folders are walked one at a time', () => {
    // GIVEN: names where a folder sorts differently as a name than its keys do ('a' < 'a-b' but 'a-b/…' < 'a/…')
    const dir = folder('order');
    const keys = ['a/x.jpg', 'a-b/y.jpg', 'a.jpg', 'a0', 'B/z.jpg', 'é/1.jpg', '\uffff/2.jpg', '😀/3.jpg', 'a/b/c.jpg', 'a/b-c.jpg'];
    writeFiles(dir, Object.fromEntries(keys.map((key) => [key, key])));

    // WHEN
    return listAll(new LocalDirectorySource(dir)).then((listed) => {
      // THEN
      expect(listed.map((file) => file.key)).toEqual(keys.slice().sort(compareCodePointOrder));
      expect(listed.find((file) => file.key === 'a0')).toEqual({ key: 'a0', size: 2, modified: expect.any(Number) });
    });
  });

  test('with followSymlinks, follows links: a linked file is listed, a linked folder walked, a broken link listed empty, a loop walked once', async () => {
    // GIVEN
    const dir = folder('links');
    const elsewhere = folder('elsewhere');
    writeFiles(dir, { 'cat/1.jpg': 'one' });
    writeFiles(elsewhere, { 'dog/2.jpg': 'two!', 'loose.jpg': 'loose' });
    fs.symlinkSync(path.join(elsewhere, 'dog'), path.join(dir, 'dog'));
    fs.symlinkSync(path.join(elsewhere, 'loose.jpg'), path.join(dir, 'cat', 'linked.jpg'));
    fs.symlinkSync(path.join(dir, 'nowhere.jpg'), path.join(dir, 'cat', 'broken.jpg'));
    fs.symlinkSync(dir, path.join(dir, 'cat', 'back'));

    // WHEN
    const listed = await listAll(new LocalDirectorySource(dir, { followSymlinks: true }));

    // THEN
    expect(listed.map(({ key, size }) => [key, size])).toEqual([
      ['cat/1.jpg', 3], ['cat/broken.jpg', 0], ['cat/linked.jpg', 5], ['dog/2.jpg', 4],
    ]);
  });

  test('by default, a link out of the source is listed as one entry, never walked, and reading it fails naming where it leads; links inside are followed', async () => {
    // GIVEN: links out of the source (a file, a folder) and inside it (a file, a folder)
    const dir = folder('links-out');
    const elsewhere = folder('secrets');
    writeFiles(dir, { 'cat/1.jpg': 'one', 'own/3.jpg': 'three' });
    writeFiles(elsewhere, { 'dog/2.jpg': 'two!', 'passwd': 'root:x:0:0' });
    fs.symlinkSync(path.join(elsewhere, 'dog'), path.join(dir, 'dog'));
    fs.symlinkSync(path.join(elsewhere, 'passwd'), path.join(dir, 'cat', 'passwd.jpg'));
    fs.symlinkSync(path.join(dir, 'cat', '1.jpg'), path.join(dir, 'cat', 'same.jpg'));
    fs.symlinkSync(path.join(dir, 'own'), path.join(dir, 'mine'));
    const source = new LocalDirectorySource(dir);

    // WHEN
    const listed = await listAll(source);

    // THEN: nothing under the linked folder outside is listed (own/ is walked once, as mine/); the links out are, and are refused when read
    expect(listed.map(({ key }) => key)).toEqual(['cat/1.jpg', 'cat/passwd.jpg', 'cat/same.jpg', 'dog', 'mine/3.jpg']);
    const secret = fs.realpathSync(path.join(elsewhere, 'passwd'));
    await expect(source.read('cat/passwd.jpg')).rejects.toMatchObject({
      name: 'LinkOutsideSourceError', code: 'ERR_LINK_OUTSIDE_SOURCE', message: expect.stringContaining(`a symbolic link to ${secret}, outside the source`),
    });
    expect(() => source.readInto('cat/passwd.jpg', 10, new ScratchBuffer())).toThrow(/symbolic link to .*outside the source .*--follow-symlinks/);
    await expect(source.read('dog')).rejects.toMatchObject({ name: 'LinkOutsideSourceError' });
    expect((await source.read('cat/same.jpg')).toString()).toBe('one');
    expect((await source.read('mine/3.jpg')).toString()).toBe('three');
    expect(isUnreadableInput(await source.read('cat/passwd.jpg').catch((error: unknown) => error))).toBe(true);
  });

  test('keys waiting for their sizes stay bounded: the walk waits while 8 batches of 4,096 are out', async () => {
    // GIVEN: 33,000 files (a ninth batch would hold the last 232) and stats that never come
    const dir = folder('bounded');
    const names: string[] = [];
    for (let c = 0; c < 10; c++) {
      fs.mkdirSync(path.join(dir, `c${c}`));
      for (let i = 0; i < 3300; i++) names.push(`c${c}/${i}`);
    }
    // touch: creating files one call at a time from a jest test took over 10 s here.
    execFileSync('xargs', ['touch'], { cwd: dir, input: names.join('\n') });
    const asked: number[] = [];
    const source = new LocalDirectorySource(dir, {
      statFiles: (keys) => {
        asked.push(keys.length);
        return new Promise<Float64Array>(() => undefined);
      },
    });

    // WHEN
    const listing = source.list()[Symbol.asyncIterator]();
    void listing.next();
    await new Promise((resolve) => setTimeout(resolve, 200));

    // THEN
    expect(asked).toEqual(new Array(8).fill(4096));
  });
});
