package io.jhca.tests.vfio.guest;

import java.util.Set;

import org.agrona.DirectBuffer;

/**
 * Runs named checks in the guest and prints one line per check for the host-side test to assert:
 * {@code check NAME ok DETAIL} or {@code check NAME FAIL WHY}.
 *
 * <p>A check named in {@code wrong} compares against a deliberately wrong expectation (one bit flipped), so that
 * {@code --wrong=NAME} shows that check going red: each check can fail.
 */
final class Checks {

    /** A check's body: returns a detail for the ok line, or throws (an assertion or anything else) to fail. */
    interface Body {
        String run(Expect expect) throws Exception;
    }

    private final Set<String> wrong;
    private int failures;

    Checks(final Set<String> wrong) {
        this.wrong = wrong;
    }

    /** Runs {@code body} as check {@code name}; a failure is printed, counted and does not stop the next checks. */
    void run(final String name, final Body body) {
        String line;
        try {
            line = "check " + name + " ok " + body.run(new Expect(wrong.contains(name)));
        } catch (Exception | AssertionError e) {
            failures++;
            line = "check " + name + " FAIL " + (e instanceof AssertionError ? e.getMessage() : e.toString());
        }
        System.out.println(line.replace('\n', ' '));
        System.out.flush();
    }

    /** Marks a check failed without running it (a prerequisite broke). */
    void skipped(final String name, final String why) {
        failures++;
        System.out.println("check " + name + " FAIL not run: " + why);
    }

    int failures() {
        return failures;
    }

    /** Comparisons of one check; inverted in one bit when the check is sabotaged. */
    static final class Expect {
        private final boolean sabotaged;

        Expect(final boolean sabotaged) {
            this.sabotaged = sabotaged;
        }

        void equal(final String what, final long expected, final long actual) {
            long want = sabotaged ? expected ^ 1 : expected;
            if (want != actual) {
                throw new AssertionError(what + ": expected 0x" + Long.toHexString(want) + ", got 0x"
                        + Long.toHexString(actual));
            }
        }

        void isTrue(final String what, final boolean condition) {
            if (condition == sabotaged) {
                throw new AssertionError(what + (sabotaged ? " (sabotaged: expected the opposite)" : ""));
            }
        }

        /** {@code actual[offset, offset + expected.length)} holds {@code expected}; names the first difference. */
        void bytes(final String what, final byte[] expected, final DirectBuffer actual, final int offset) {
            for (int i = 0; i < expected.length; i++) {
                byte want = (byte) (i == 0 && sabotaged ? expected[i] ^ 1 : expected[i]);
                byte got = actual.getByte(offset + i);
                if (want != got) {
                    throw new AssertionError(what + ": first difference at byte " + i + " of " + expected.length
                            + ": expected 0x" + Integer.toHexString(want & 0xFF) + ", got 0x"
                            + Integer.toHexString(got & 0xFF));
                }
            }
        }
    }
}
