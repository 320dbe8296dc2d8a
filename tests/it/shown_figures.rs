//! What a script displays comes back once: the figures of `plt.show()`, a figure drawn
//! after the last `plt.show()` and left open (as a notebook would display it), and the
//! figure a `plt.pause()` loop updates (saved by the script, not once more per pause;
//! there is no window to wait for). A job that saves a figure itself gets back what it
//! saved and what it showed, not what it left open besides.

use crate::common;

use common::{builder, expect_ok};
use pyward::{Job, Obtained, Outcome};

fn obtained(o: &Outcome) -> Vec<(String, Option<Obtained>)> {
    o.artifacts()
        .iter()
        .map(|a| (a.name.clone(), a.obtained))
        .collect()
}

#[test]
fn shown_figures_and_the_ones_drawn_after_come_back_once() {
    let exec = builder().workers(1).build().expect("pool starts");
    let shown_then_drawn = "plt.plot([1, 2, 3])\nplt.show()\n\
                            fig2, ax2 = plt.subplots()\nax2.hist([1, 2, 2, 3])\n";
    let o = exec.run(Job::new(shown_then_drawn)).unwrap();
    expect_ok(&o);
    assert_eq!(
        obtained(&o),
        [
            ("figure_1.png".to_string(), Some(Obtained::Shown)),
            ("figure_2.png".to_string(), Some(Obtained::OpenAtEnd)),
        ]
    );

    let paused =
        "fig, ax = plt.subplots()\nfor i in range(3):\n    ax.plot(range(i + 1), 'o-')\n    \
                  plt.pause(0.01)\nfig.savefig('live.png')\n";
    let o = exec.run(Job::new(paused)).unwrap();
    expect_ok(&o);
    assert_eq!(
        obtained(&o),
        [("live.png".to_string(), Some(Obtained::Saved))]
    );

    let saved_besides =
        "plt.plot([1])\nplt.show()\nplt.figure()\nplt.plot([2])\nplt.savefig('b.png')\n\
                         plt.figure()\nplt.plot([3])\n";
    let o = exec.run(Job::new(saved_besides)).unwrap();
    expect_ok(&o);
    assert_eq!(
        obtained(&o),
        [
            ("b.png".to_string(), Some(Obtained::Saved)),
            ("figure_1.png".to_string(), Some(Obtained::Shown)),
        ]
    );
}
