// The bench's allocation counter: what it adds up from the heap's levels and recorded collections.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { allocationCounter } = require('../../../bench/alloc-count.cjs') as {
  allocationCounter: (levelAtStart: number) => {
    reading(used: number): void;
    collection(before: number, after: number): void;
    total(): number;
  };
};

describe('the bench allocation counter', () => {
  it('counts the growth before each recorded collection and after the last one', () => {
    const counter = allocationCounter(100);
    counter.collection(180, 60); // 80 allocated, then freed to 60
    counter.collection(90, 70); // 30 more
    counter.reading(95); // 25 more since
    expect(counter.total()).toBe(135);
  });

  it('takes a collection it was not told of as the new level, never off the total', () => {
    const counter = allocationCounter(100);
    counter.reading(150); // 50 allocated
    counter.reading(40); // a collection nobody recorded
    counter.reading(70); // 30 allocated from the new level
    expect(counter.total()).toBe(80);
  });

  it('never falls, whatever order of readings and collections it is given', () => {
    // The failure it replaces: readings with collections missing in between drove the total negative.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 1000;
    const counter = allocationCounter(500);
    let previous = counter.total();
    for (let i = 0; i < 2000; i++) {
      if (next() % 3 === 0) counter.collection(next(), next());
      else counter.reading(next());
      expect(counter.total()).toBeGreaterThanOrEqual(previous);
      previous = counter.total();
    }
  });
});
