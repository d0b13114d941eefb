package io.jhca.rxe;

/** Who drives a software device's engine. */
public enum ProgressMode {
    /** An engine thread per device (an Agrona AgentRunner with the configured idle strategy). */
    THREAD,
    /** No thread: the application drives the engine by calling {@code Context.progress()} from its polling loop. */
    CALLER
}
