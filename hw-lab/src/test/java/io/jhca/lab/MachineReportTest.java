package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** MachineReport's reading of /proc/cpuinfo, on texts as Linux prints them, and its line. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class MachineReportTest {

    /** The first processor of an x86 guest's /proc/cpuinfo, shortened (arch/x86/kernel/cpu/proc.c's layout). */
    private static final String X86_GUEST = String.join("\n",
            "processor\t: 0",
            "vendor_id\t: AuthenticAMD",
            "cpu family\t: 25",
            "model\t\t: 1",
            "model name\t: AMD EPYC 7B13 64-Core Processor",
            "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep avx2 hypervisor lahf_lm",
            "",
            "processor\t: 1",
            "model name\t: AMD EPYC 7B13 64-Core Processor",
            "");

    /** An arm64 one: no "model name", the part number instead (arch/arm64/kernel/cpuinfo.c). */
    private static final String ARM64 = String.join("\n",
            "processor\t: 0",
            "BogoMIPS\t: 50.00",
            "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics",
            "CPU implementer\t: 0x41",
            "CPU part\t: 0xd0c",
            "");

    @Test
    void x86TakesTheFirstModelNameAndTheHypervisorFlag() {
        assertEquals("AMD EPYC 7B13 64-Core Processor", MachineReport.cpuModel(X86_GUEST));
        assertTrue(MachineReport.underHypervisor(X86_GUEST));
    }

    @Test
    void aFlagThatOnlyContainsTheWordIsNotIt() {
        String bare = X86_GUEST.replace(" hypervisor ", " hypervisorx ");
        assertFalse(MachineReport.underHypervisor(bare));
        assertFalse(MachineReport.underHypervisor(X86_GUEST.replace(" hypervisor", "")));
    }

    @Test
    void arm64FallsBackToThePartAndHasNoFlagsLine() {
        assertEquals("0xd0c", MachineReport.cpuModel(ARM64));
        assertFalse(MachineReport.underHypervisor(ARM64));
    }

    @Test
    void nothingReadableNamesTheArchitecture() {
        assertEquals(System.getProperty("os.arch"), MachineReport.cpuModel(""));
        assertEquals(System.getProperty("os.arch"), MachineReport.cpuModel("model name\t: \n"));
    }

    @Test
    void theLineNamesEveryPartAndSaysWhenTheCallWasNotTimed() {
        assertEquals(" Machine: 2 CPUs, AMD EPYC, under a hypervisor, Linux 6.1 (amd64) | a null system call (getppid):"
                + " 231 ns", new MachineReport.Machine(2, "AMD EPYC", true, "Linux 6.1 (amd64)", 231).line());
        assertEquals(" Machine: 4 CPUs, x, Linux 6.1 (amd64) | a null system call (getppid): not measured",
                new MachineReport.Machine(4, "x", false, "Linux 6.1 (amd64)", -1).line());
    }

    @Test
    void thisMachineIsTimedOnLinux() {
        MachineReport.Machine m = MachineReport.get();
        assertEquals(Runtime.getRuntime().availableProcessors(), m.cpus());
        if (System.getProperty("os.name").startsWith("Linux")) {
            assertTrue(m.syscallNanos() > 0 && m.syscallNanos() < 1_000_000, "getppid: " + m.syscallNanos() + " ns");
        }
    }
}
