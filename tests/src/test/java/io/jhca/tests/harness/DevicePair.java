package io.jhca.tests.harness;

import io.jhca.verbs.Context;

import java.net.InetAddress;

import org.junit.jupiter.api.Assumptions;

/**
 * Two devices the suite runs traffic between: how to open each side, whether the application must drive the
 * engines ({@link Progress#CALLER}), and which IP each side should carry in its RoCEv2 GID (null if not known
 * in advance, e.g. real hardware). A pair whose provider is absent is still listed, with the reason, so that
 * every test using it is reported as skipped with that reason, never silently dropped.
 */
public final class DevicePair {

    /** Who runs a software device's engine. */
    public enum Progress {
        /** The provider's own thread (rxe THREAD mode); hardware needs nothing either. */
        THREAD,
        /** The application, through {@link Context#progress()} in its polling loop (rxe CALLER mode). */
        CALLER
    }

    /** Opens one side: 0 is A, 1 is B. */
    @FunctionalInterface
    public interface Opener {
        Context open(int side);
    }

    private final String label;
    private final String provider;
    private final Progress progress;
    private final Opener opener;
    private final InetAddress addressA;
    private final InetAddress addressB;
    private final String absentReason;

    private DevicePair(String label, String provider, Progress progress, Opener opener,
                       InetAddress addressA, InetAddress addressB, String absentReason) {
        this.label = label;
        this.provider = provider;
        this.progress = progress;
        this.opener = opener;
        this.addressA = addressA;
        this.addressB = addressB;
        this.absentReason = absentReason;
    }

    public static DevicePair present(String label, String provider, Progress progress, Opener opener,
                                     InetAddress addressA, InetAddress addressB) {
        return new DevicePair(label, provider, progress, opener, addressA, addressB, null);
    }

    /** A pair that cannot run here; {@link #assumePresent()} prints the reason and skips the test. */
    public static DevicePair absent(String label, String provider, String reason) {
        return new DevicePair(label, provider, Progress.THREAD, null, null, null, reason);
    }

    public String label() {
        return label;
    }

    public String provider() {
        return provider;
    }

    public Progress progress() {
        return progress;
    }

    public boolean isRxe() {
        return "rxe".equals(provider);
    }

    /** The IP address side A's RoCEv2 GID must carry, or null if unknown. */
    public InetAddress addressA() {
        return addressA;
    }

    public InetAddress addressB() {
        return addressB;
    }

    public String absentReason() {
        return absentReason;
    }

    /** Skips the calling test, with the reason printed, when this pair's provider is not present. */
    public void assumePresent() {
        if (absentReason != null) {
            System.out.println("SKIP [" + label + "]: " + absentReason);
            Assumptions.abort(absentReason);
        }
    }

    Context open(int side) {
        assumePresent();
        return opener.open(side);
    }

    /** The display name of parameterized tests; an absent pair says why it is skipped. */
    @Override
    public String toString() {
        return absentReason == null ? label : label + " [skipped: " + absentReason + "]";
    }
}
