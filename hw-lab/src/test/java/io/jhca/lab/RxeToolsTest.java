package io.jhca.lab;

import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Verbs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every tool on two rxe devices named rxe0 and rxe1 (real RoCEv2 over UDP between two software HCAs in this
 * JVM). Their addresses are moved from the defaults (127.0.0.1/.2) to 127.0.71.1/.2 through the provider's
 * jhca.rxe.devices property, so this test never collides with another process that uses the default devices
 * (port 4791 can be bound once per address). Skipped, with the reason printed, while no rxe provider is on the
 * class path (it is written concurrently with these tools).
 */
class RxeToolsTest extends ToolsEndToEnd {
    static final String PROPERTY = "jhca.rxe.devices";
    static String saved;

    @BeforeAll
    static void rxePresent() {
        saved = System.getProperty(PROPERTY);
        System.setProperty(PROPERTY, "rxe0=127.0.71.1,rxe1=127.0.71.2");
        boolean r0 = false;
        boolean r1 = false;
        for (DeviceInfo d : Verbs.devices()) {
            r0 |= d.name().equals("rxe0") && d.provider().equals("rxe");
            r1 |= d.name().equals("rxe1") && d.provider().equals("rxe");
        }
        assumeTrue(r0 && r1, "rxe0/rxe1 not listed: the rxe provider is not on the class path; devices found: " + Verbs.devices());
    }

    @AfterAll
    static void restore() {
        if (saved == null) {
            System.clearProperty(PROPERTY);
        } else {
            System.setProperty(PROPERTY, saved);
        }
    }

    @Override
    String dev0() {
        return "rxe0";
    }

    @Override
    String dev1() {
        return "rxe1";
    }

    @Override
    String ip0() {
        return "127.0.71.1";
    }

    @Override
    String ip1() {
        return "127.0.71.2";
    }
}
