package io.jhca.doorbell;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Proves the second surefire run really interprets (-Xint) and the first really does not. */
class ExecutionModeTest {

    @Test
    void runsInTheModeThePomAskedFor() {
        boolean wantInterpreted = Boolean.getBoolean("jhca.test.interpreted");
        String info = System.getProperty("java.vm.info", "");
        assertEquals(wantInterpreted, info.contains("interpreted mode"), "java.vm.info = " + info);
    }
}
