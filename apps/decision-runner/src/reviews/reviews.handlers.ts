import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ListReviewsRequest, ResolveReviewRequest, ReviewRef, SUBJECTS } from '@ds/contracts';
import { ReviewsService } from './reviews.service';

@Controller()
export class ReviewsHandlers {
  constructor(private readonly reviews: ReviewsService) {}

  @MessagePattern(SUBJECTS.runner.listReviews)
  list(@Payload() request: ListReviewsRequest) {
    return this.reviews.list(request);
  }

  @MessagePattern(SUBJECTS.runner.getReview)
  get(@Payload() request: ReviewRef) {
    return this.reviews.get(request);
  }

  @MessagePattern(SUBJECTS.runner.claimReview)
  claim(@Payload() request: ReviewRef) {
    return this.reviews.claim(request);
  }

  @MessagePattern(SUBJECTS.runner.releaseReview)
  release(@Payload() request: ReviewRef) {
    return this.reviews.release(request);
  }

  @MessagePattern(SUBJECTS.runner.resolveReview)
  resolve(@Payload() request: ResolveReviewRequest) {
    return this.reviews.resolve(request);
  }
}
