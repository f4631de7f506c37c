import { labelByFolder } from '../../../lambda/packing/planning/label-map';
import { PlanError } from '../../../lambda/packing/planning/plan-error';

const listed = (...keys: string[]) => keys.map((key) => ({ key, size: 1 }));

describe('labelByFolder', () => {
  test('numbers classes by sorted name whatever order the files come in', () => {
    // WHEN
    const { labels, labelMap } = labelByFolder(listed('dog/1', 'cat/1', 'dog/2', 'bird/x/y', 'cat/2'));

    // THEN
    expect(labelMap).toEqual({ bird: 0, cat: 1, dog: 2 });
    expect([...labels]).toEqual([2, 1, 2, 0, 1]);
  });

  test('a class name that is a prefix of another is its own class', () => {
    // WHEN
    const { labels, labelMap } = labelByFolder(listed('cat-x/1', 'cat/1', 'cat.jpg/1', 'cat/2'));

    // THEN
    expect(labelMap).toEqual({ 'cat': 0, 'cat-x': 1, 'cat.jpg': 2 });
    expect([...labels]).toEqual([1, 0, 2, 0]);
  });

  test('a key starting with a slash has an empty class name and fails', () => {
    expect(() => labelByFolder(listed('cat/1', '/abs/2'))).toThrow(PlanError);
    expect(() => labelByFolder(listed('cat/1', '/abs/2'))).toThrow(/'\/abs\/2' starts with '\/'/);
  });

  test.each(['./2.jpg', '../2.jpg', '../cat/2.jpg'])('an S3 key %j would make a class named . or ..: it fails naming the key', (key) => {
    expect(() => labelByFolder(listed('cat/1', key))).toThrow(PlanError);
    expect(() => labelByFolder(listed('cat/1', key))).toThrow(`'${key}' starts with '${key.split('/')[0]}/' (a class named '${key.split('/')[0]}')`);
  });
});
