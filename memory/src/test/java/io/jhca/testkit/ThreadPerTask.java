package io.jhca.testkit;

import java.util.concurrent.Executor;

/**
 * Runs each task on a new daemon thread: for a test's {@code CompletableFuture.supplyAsync(task, EXECUTOR)}
 * whose task blocks (a server's accept, a client's connect, a tool's run). Without an executor the task goes to the
 * common pool, which has one worker on a 2-CPU machine: JDK 17 then started a thread per task anyway, JDK 25 queues
 * the tasks on that one worker, so two tasks that wait for each other deadlock, and a task left blocked by a failed
 * test starves every later one.
 */
public final class ThreadPerTask {

    public static final Executor EXECUTOR = task -> {
        Thread t = new Thread(task, "test-task");
        t.setDaemon(true);
        t.start();
    };

    private ThreadPerTask() {
    }
}
