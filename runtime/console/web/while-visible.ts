/**
 * Runs `refresh` every `ms` while the page is visible: nothing is asked while the tab is hidden (an
 * operator's console left open in a background tab costs the service nothing), and it runs at once
 * when the tab shows again. One run at a time: the next is scheduled when the previous has ended.
 */
export function refreshWhileVisible(refresh: () => Promise<void>, ms: number): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  const tick = async () => {
    timer = undefined;
    if (running || document.hidden) return;
    running = true;
    try {
      await refresh();
    } finally {
      running = false;
      if (!document.hidden && timer === undefined) timer = setTimeout(tick, ms);
    }
  };
  document.addEventListener('visibilitychange', () => {
    if (document.hidden) {
      clearTimeout(timer);
      timer = undefined;
    } else if (timer === undefined) void tick();
  });
  timer = setTimeout(tick, ms);
}
