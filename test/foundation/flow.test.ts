import { describe, expect, it } from 'vitest';
import { runFlow, type Step } from '../../src/flow.js';

describe('runFlow', () => {
  type State = { log: string[]; made: number[] };
  const step = (name: string, fail = false): Step<State> => ({
    name,
    run(s) {
      if (fail) throw new Error(`${name} failed`);
      s.log.push(`run ${name}`);
      s.made.push(s.made.length);
    },
    undo(s) {
      s.log.push(`undo ${name}`);
    },
  });

  it('runs every step in order and answers the state', async () => {
    const state = await runFlow([step('a'), step('b'), step('c')], { log: [], made: [] });
    expect(state.log).toEqual(['run a', 'run b', 'run c']);
    expect(state.made).toEqual([0, 1, 2]);
  });

  it('undoes the completed steps in reverse order when one fails, and throws its error', async () => {
    const state: State = { log: [], made: [] };
    await expect(runFlow([step('a'), step('b'), step('c', true), step('d')], state)).rejects.toThrow(
      'c failed',
    );
    expect(state.log).toEqual(['run a', 'run b', 'undo b', 'undo a']);
  });

  it('reports an undo that fails, runs the others, and still throws the first error', async () => {
    const state: State = { log: [], made: [] };
    const failures: string[] = [];
    const broken: Step<State> = {
      name: 'broken',
      run: () => {},
      undo: () => {
        throw new Error('undo failed');
      },
    };
    await expect(
      runFlow([step('a'), broken, step('c', true)], state, { onUndoFailure: (name) => failures.push(name) }),
    ).rejects.toThrow('c failed');
    expect(failures).toEqual(['broken']);
    expect(state.log).toEqual(['run a', 'undo a']);
  });
});
