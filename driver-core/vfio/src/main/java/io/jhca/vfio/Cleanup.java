package io.jhca.vfio;

/** Runs every step of a teardown even when one fails, keeping the first failure and adding the rest as suppressed. */
final class Cleanup {

    private Cleanup() {
    }

    static RuntimeException run(final RuntimeException failure, final Runnable step) {
        try {
            step.run();
            return failure;
        } catch (final RuntimeException e) {
            if (failure == null) {
                return e;
            }
            failure.addSuppressed(e);
            return failure;
        }
    }
}
