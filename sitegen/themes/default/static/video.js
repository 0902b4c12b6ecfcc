/* sitegen: videos load on demand (a file, so a strict Content-Security-Policy holds).
   An article's YouTube or Vimeo video is a stand-in (blocks/video.html): its title, a play
   button and a link to the video's page; nothing of the platform loads with the page.
   This shows each stand-in's play button and, on a click, puts the player (the figure's
   data-player address: YouTube's privacy-enhanced youtube-nocookie.com, Vimeo with
   dnt=1) in its place, titled with the video's title, and moves the focus to it. Without
   JavaScript the link still leads to the video. */
(function () {
  "use strict";
  var play = function (figure) {
    var frame = figure.querySelector(".video__frame");
    var src = figure.getAttribute("data-player") || "";
    if (!frame || !/^https:\/\/(www\.youtube-nocookie\.com|player\.vimeo\.com)\//.test(src)) {
      return;
    }
    var player = document.createElement("iframe");
    player.className = "video__player";
    player.src = src + (src.indexOf("?") < 0 ? "?" : "&") + "autoplay=1";
    player.title = figure.getAttribute("data-title") || "";
    player.setAttribute("allow", "autoplay; encrypted-media; picture-in-picture; fullscreen");
    player.setAttribute("referrerpolicy", "strict-origin-when-cross-origin");
    frame.replaceChildren(player);
    figure.classList.add("video--playing");
    player.focus();
  };
  Array.prototype.forEach.call(document.querySelectorAll(".video--facade"), function (figure) {
    var button = figure.querySelector(".video__play");
    if (!button) {
      return;
    }
    button.hidden = false;
    button.addEventListener("click", function () { play(figure); });
  });
})();
