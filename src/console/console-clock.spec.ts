import { makeClockMovable, moveClock } from '../common/clock';
import { renderPage } from './console-render';

/** Every console page says when the sandbox clock is moved, with the service's time. */
describe('console pages under the sandbox clock', () => {
  const page = (): string => renderPage('message', { title: 'Hello', text: 'Some text', back: null });

  it('say nothing of the clock while it is the system clock', () => {
    expect(page()).not.toContain('Sandbox clock moved');
  });

  it('show the moved time once it moved', () => {
    makeClockMovable(0);
    moveClock(86_400);
    expect(page()).toContain('Sandbox clock moved 86400 s ahead');
  });
});
