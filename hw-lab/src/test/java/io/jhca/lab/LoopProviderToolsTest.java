package io.jhca.lab;

/** Every tool on the test-only loop provider (loop0, loop1): always runs, whatever other providers exist. */
class LoopProviderToolsTest extends ToolsEndToEnd {
    @Override
    String dev0() {
        return "loop0";
    }

    @Override
    String dev1() {
        return "loop1";
    }
}
