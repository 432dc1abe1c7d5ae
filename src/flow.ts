/**
 * A flow that crosses modules, written as named steps that run top to bottom, each with the undo
 * that takes it back beside it (docs/development.md, 'Flows'). When a step fails, the undos of
 * the steps that completed run in reverse order, and the step's error is thrown on: an undo that
 * fails too is reported to `onUndoFailure` (to log it) and never hides the first error.
 *
 * A step works on the flow's state object: it reads what earlier steps put there and adds what it
 * made. A step that needs a transaction opens it itself (withTransaction), so "these steps are
 * atomic" is visible where they are listed.
 */
export interface Step<S> {
  /** What the step does, in the flow's words ("hold stock", "take payment"). */
  name: string;
  run(state: S): Promise<void> | void;
  /** Takes the completed step back when a later step fails. */
  undo?(state: S): Promise<void> | void;
}

export interface FlowOptions {
  /** Told of an undo that failed (the flow's error is thrown regardless). */
  onUndoFailure?(step: string, error: unknown): void;
}

/** Runs `steps` in order on `state`, and answers the state once all have run. */
export async function runFlow<S>(steps: readonly Step<S>[], state: S, options: FlowOptions = {}): Promise<S> {
  const done: Step<S>[] = [];
  for (const step of steps) {
    try {
      await step.run(state);
    } catch (e) {
      for (const completed of done.reverse()) {
        if (!completed.undo) continue;
        try {
          await completed.undo(state);
        } catch (undoError) {
          options.onUndoFailure?.(completed.name, undoError);
        }
      }
      throw e;
    }
    done.push(step);
  }
  return state;
}
