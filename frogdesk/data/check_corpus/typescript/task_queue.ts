// A typed task queue with bounded concurrency, priorities and cancellation.

export type TaskState = "pending" | "running" | "done" | "failed" | "cancelled";

export interface Task<T> {
  id: number;
  priority: number;
  state: TaskState;
  run: (signal: AbortSignal) => Promise<T>;
  result?: T;
  error?: unknown;
}

export interface QueueOptions {
  concurrency: number;
  onSettled?: (task: Task<unknown>) => void;
}

export class TaskQueue {
  private nextId = 1;
  private readonly pending: Task<unknown>[] = [];
  private readonly running = new Map<number, AbortController>();
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly options: QueueOptions) {
    if (options.concurrency < 1) {
      throw new RangeError("concurrency must be at least 1");
    }
  }

  add<T>(run: (signal: AbortSignal) => Promise<T>, priority = 0): Task<T> {
    const task: Task<T> = { id: this.nextId++, priority, state: "pending", run };
    this.pending.push(task as Task<unknown>);
    // Highest priority first; equal priorities keep insertion order.
    this.pending.sort((a, b) => b.priority - a.priority || a.id - b.id);
    this.pump();
    return task;
  }

  cancel(id: number): boolean {
    const index = this.pending.findIndex((task) => task.id === id);
    if (index >= 0) {
      const [task] = this.pending.splice(index, 1);
      task.state = "cancelled";
      this.options.onSettled?.(task);
      return true;
    }
    const controller = this.running.get(id);
    if (controller) {
      controller.abort();
      return true;
    }
    return false;
  }

  async drain(): Promise<void> {
    if (this.pending.length === 0 && this.running.size === 0) {
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private pump(): void {
    while (this.running.size < this.options.concurrency && this.pending.length > 0) {
      const task = this.pending.shift()!;
      const controller = new AbortController();
      this.running.set(task.id, controller);
      task.state = "running";
      task
        .run(controller.signal)
        .then((result) => {
          task.result = result;
          task.state = controller.signal.aborted ? "cancelled" : "done";
        })
        .catch((error: unknown) => {
          task.error = error;
          task.state = controller.signal.aborted ? "cancelled" : "failed";
        })
        .finally(() => {
          this.running.delete(task.id);
          this.options.onSettled?.(task);
          this.pump();
          if (this.pending.length === 0 && this.running.size === 0) {
            this.waiters.splice(0).forEach((resolve) => resolve());
          }
        });
    }
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new Error("aborted"));
    });
  });
}
